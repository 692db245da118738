package fetch

import (
	"context"
	"errors"
	"fmt"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
)

// gitFetcher fetches from one remote into a fresh in-memory repository.
type gitFetcher struct {
	opts   GitOptions
	tls    gitTLS
	auth   transport.AuthMethod
	store  *gitStore
	repo   *git.Repository
	remote *git.Remote
}

func newGitFetcher(opts GitOptions, auth transport.AuthMethod, limit int64) (*gitFetcher, error) {
	installGitClient()
	tlsOpts, err := gitTLSFor(opts)
	if err != nil {
		return nil, err
	}
	store := newGitStore(limit)
	repo, err := git.Init(store, nil)
	if err != nil {
		return nil, fmt.Errorf("create in-memory repository: %w", err)
	}
	remote, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{opts.Repository}})
	if err != nil {
		return nil, fmt.Errorf("configure remote %s: %w", opts.Repository, err)
	}
	return &gitFetcher{opts: opts, tls: tlsOpts, auth: auth, store: store, repo: repo, remote: remote}, nil
}

// fetch runs one fetch of specs, depth commits deep (0: all history).
func (f *gitFetcher) fetch(ctx context.Context, depth int, specs ...config.RefSpec) error {
	err := f.remote.FetchContext(ctx, &git.FetchOptions{
		RefSpecs:        specs,
		Depth:           depth,
		Tags:            git.NoTags,
		Auth:            f.auth,
		InsecureSkipTLS: f.tls.insecure,
		CABundle:        f.tls.caBundle,
		ProxyOptions:    f.tls.proxy,
	})
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	return err
}

// ref fetches one branch or tag without history and returns its commit.
func (f *gitFetcher) ref(ctx context.Context, name plumbing.ReferenceName, what string) (plumbing.Hash, error) {
	if err := f.fetch(ctx, 1, config.RefSpec("+"+name+":"+name)); err != nil {
		return plumbing.ZeroHash, f.failed(err, what, "for the files of its commit alone (no history is fetched)")
	}
	return f.resolve(what, string(name))
}

// resolve finds the commit a revision names among what was fetched, an
// annotated tag peeled to its commit.
func (f *gitFetcher) resolve(what, revision string) (plumbing.Hash, error) {
	h, err := f.repo.ResolveRevision(plumbing.Revision(revision))
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%w: %s not found in %s: %v", ErrInvalidContent, what, f.opts.Repository, err)
	}
	return *h, nil
}

// smallerRepository is what a user can do about a repository too large to
// fetch even without history.
const smallerRepository = "keep the bundle in a smaller repository"

// failed describes a failed fetch of what. Over the limits the content is
// at fault (fetching again cannot help until the source changes), and the
// message says which limit and, with detail (what the bytes were for) and
// advice, what to do; anything else (network, server, authentication) is
// left to be retried.
func (f *gitFetcher) failed(err error, what, detail string, advice ...string) error {
	if len(advice) == 0 {
		advice = []string{smallerRepository}
	}
	var large *objectTooLargeError
	switch {
	case errors.Is(err, errFetchLimit):
		return fmt.Errorf("%w: git fetch %s: the server sent more than the limit of %d bytes %s; %s",
			ErrInvalidContent, what, f.store.limit, detail, strings.Join(advice, ", or "))
	case errors.As(err, &large):
		return fmt.Errorf("%w: git fetch %s: a file in the repository inflates to %d bytes, over the limit of %d bytes; %s",
			ErrInvalidContent, what, large.size, large.limit, smallerRepository)
	}
	return fmt.Errorf("git fetch %s of %s: %w", what, f.opts.Repository, err)
}
