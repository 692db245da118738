package fetch

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
)

// deepenFactor multiplies the depth of each search round: few rounds (each
// costs a negotiation with the server), at most this many times the
// history the commit needed.
const deepenFactor = 4

// maxDepth ends a search that the server keeps answering without ending
// the history, far beyond any real repository.
const maxDepth = 1 << 30

// commit fetches the commit opts.Commit names with as little history as the
// server allows. A server that lets a client ask for any commit reachable
// from its refs (uploadpack.allowReachableSHA1InWant or allowAnySHA1InWant,
// as GitHub and GitLab do) sends the commit alone. Any other server (git's
// default over protocol v0, the only protocol go-git speaks) only sends
// what its branches and tags reach, so they are fetched deeper round by
// round until the commit is among what arrived or their history is
// complete.
func (f *gitFetcher) commit(ctx context.Context) (plumbing.Hash, error) {
	what := "commit " + f.opts.Commit
	if plumbing.IsHash(f.opts.Commit) {
		alone, err := f.sendsCommitsAlone(ctx)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("git fetch %s of %s: %w", what, f.opts.Repository, err)
		}
		if alone {
			return f.commitAlone(ctx, what)
		}
	}
	return f.searchHistory(ctx, what)
}

// sendsCommitsAlone reads the server's capabilities. A server that only
// allows its refs' tips (allow-tip-sha1-in-want) is searched like one that
// allows nothing: a tip is in the search's first round.
func (f *gitFetcher) sendsCommitsAlone(ctx context.Context) (bool, error) {
	ep, err := transport.NewEndpoint(f.opts.Repository)
	if err != nil {
		return false, err
	}
	f.tls.endpoint(ep)
	c, err := client.NewClient(ep)
	if err != nil {
		return false, err
	}
	session, err := c.NewUploadPackSession(ep, f.auth)
	if err != nil {
		return false, err
	}
	defer session.Close()
	refs, err := session.AdvertisedReferencesContext(ctx)
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return refs.Capabilities.Supports(capability.AllowReachableSHA1InWant), nil
}

// commitAlone fetches the commit without history from a server that allows
// it; one that then refuses it does not have it.
func (f *gitFetcher) commitAlone(ctx context.Context, what string) (plumbing.Hash, error) {
	spec := config.RefSpec(f.opts.Commit + ":refs/rukpak-kapp/pinned")
	if err := f.fetch(ctx, 1, spec); err != nil {
		if refused(err) {
			return plumbing.ZeroHash, fmt.Errorf("%w: %s not found in %s: %v", ErrInvalidContent, what, f.opts.Repository, err)
		}
		return plumbing.ZeroHash, f.failed(err, what, "for the files of that commit alone (no history is fetched)")
	}
	return f.resolve(what, f.opts.Commit)
}

// searchHistory fetches every branch and tag, deepening their history by
// deepenFactor a round, until the commit (or the short id, branch or tag
// opts.Commit names) is among what arrived or the history is complete.
func (f *gitFetcher) searchHistory(ctx context.Context, what string) (plumbing.Hash, error) {
	specs := []config.RefSpec{"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"}
	for depth := 1; depth <= maxDepth; depth *= deepenFactor {
		before := f.store.received
		err := f.fetch(ctx, depth, specs...)
		if errors.Is(err, transport.ErrEmptyRemoteRepository) {
			break
		}
		if err != nil {
			return plumbing.ZeroHash, f.failed(err, what,
				"for the history of the branches and tags searched for that commit, as the server does not send a commit by its id alone (uploadpack.allowReachableSHA1InWant)",
				"pin a tag or branch instead", "let the server send commits by id", smallerRepository)
		}
		if h, err := f.repo.ResolveRevision(plumbing.Revision(f.opts.Commit)); err == nil {
			return *h, nil
		}
		complete, err := f.trimShallow()
		if err != nil {
			return plumbing.ZeroHash, err
		}
		// A server that sends nothing more has no more history (it may be
		// a shallow clone itself).
		if complete || f.store.received == before {
			break
		}
	}
	return f.resolve(what, f.opts.Commit)
}

// trimShallow keeps the list of shallow commits true: go-git adds the
// commits the server says are shallow but never removes those a deeper
// fetch completed, and a stale entry would make the server send their
// parents again. It reports whether no shallow commit is left, that is,
// whether the whole history is here.
func (f *gitFetcher) trimShallow() (bool, error) {
	shallow, err := f.store.Shallow()
	if err != nil {
		return false, fmt.Errorf("read shallow commits: %w", err)
	}
	var still []plumbing.Hash
	for _, h := range shallow {
		c, err := object.GetCommit(f.store, h)
		if err != nil || !f.hasAll(c.ParentHashes) {
			still = append(still, h)
		}
	}
	if err := f.store.SetShallow(still); err != nil {
		return false, fmt.Errorf("write shallow commits: %w", err)
	}
	return len(still) == 0, nil
}

func (f *gitFetcher) hasAll(hashes []plumbing.Hash) bool {
	for _, h := range hashes {
		if f.store.HasEncodedObject(h) != nil {
			return false
		}
	}
	return true
}

// refused reports whether the server turned the commit down. go-git hands
// on git's own words ("upload-pack: not our ref <id>") as plain text when
// it reads them first. git upload-pack reads the wants before anything else
// and exits at once on one it will not send, so over ssh the session can
// close while go-git is still finishing the request; go-git then says only
// "closing input: EOF", and git's words are lost. That race is the
// server's refusal too: nothing else closes a session between the
// advertisement, which came, and the request.
func refused(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "not our ref") || strings.Contains(msg, "closing input: EOF")
}
