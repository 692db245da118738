package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/memory"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// GitOptions say what to check out and how to reach the repository.
// Exactly one of Commit, Tag and Branch is set.
type GitOptions struct {
	Repository          string
	Commit, Tag, Branch string
	// Directory is the bundle root within the repository.
	Directory string
	// Username and Password authenticate over http(s).
	Username, Password string
	// SSHPrivateKey and SSHKnownHosts authenticate over ssh.
	SSHPrivateKey, SSHKnownHosts []byte
	// InsecureSkipVerify skips TLS verification and ssh host key checks.
	InsecureSkipVerify bool
	// Network is kapp-controller-config's CAs, proxies and hosts not
	// verified, for http(s) repositories; nil: the environment's.
	Network *Network
}

// GitTree is a fetched checkout: the bundle's files and the commit.
type GitTree struct {
	Files  Files
	Commit string
}

// FetchGit fetches into memory what the requested ref needs and reads the
// files under Directory at it. Nothing touches the disk. A branch or tag is
// fetched without history, a commit with as little history as the server
// allows (gitFetcher.commit). limits.MaxFetchBytes caps the bytes received.
func FetchGit(ctx context.Context, opts GitOptions, limits Limits) (*GitTree, error) {
	auth, err := gitAuth(opts)
	if err != nil {
		return nil, err
	}
	f, err := newGitFetcher(opts, auth, limits.MaxFetchBytes)
	if err != nil {
		return nil, err
	}
	var hash plumbing.Hash
	switch {
	case opts.Commit != "":
		hash, err = f.commit(ctx)
	case opts.Tag != "":
		hash, err = f.ref(ctx, plumbing.NewTagReferenceName(opts.Tag), "tag "+opts.Tag)
	case opts.Branch != "":
		hash, err = f.ref(ctx, plumbing.NewBranchReferenceName(opts.Branch), "branch "+opts.Branch)
	default:
		return nil, fmt.Errorf("%w: the git ref names no branch, tag or commit", ErrInvalidContent)
	}
	if err != nil {
		return nil, err
	}
	commit, err := f.repo.CommitObject(hash)
	if err != nil {
		return nil, fmt.Errorf("%w: checkout commit %s: %v", ErrInvalidContent, hash, err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("read tree of commit %s: %w", hash, err)
	}
	files, err := treeFiles(tree, f.store, opts.Directory, limits)
	if err != nil {
		return nil, err
	}
	return &GitTree{Files: files, Commit: hash.String()}, nil
}

// RemoteHead returns the commit a branch points at, without cloning, so a
// tracked branch can be polled cheaply.
func RemoteHead(ctx context.Context, opts GitOptions) (string, error) {
	auth, err := gitAuth(opts)
	if err != nil {
		return "", err
	}
	tlsOpts, err := gitTLSFor(opts)
	if err != nil {
		return "", err
	}
	installGitClient()
	remote := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{opts.Repository}})
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: auth, InsecureSkipTLS: tlsOpts.insecure, CABundle: tlsOpts.caBundle, ProxyOptions: tlsOpts.proxy})
	if err != nil {
		return "", fmt.Errorf("git ls-remote %s: %w", opts.Repository, err)
	}
	want := plumbing.NewBranchReferenceName(opts.Branch)
	for _, r := range refs {
		if r.Name() == want {
			return r.Hash().String(), nil
		}
	}
	return "", fmt.Errorf("git ls-remote %s: branch %q not found", opts.Repository, opts.Branch)
}

// treeFiles reads the blobs under dir. Each blob's size is checked against
// the limits before it is inflated: a few bytes in a packfile can inflate to
// gigabytes.
func treeFiles(tree *object.Tree, objects storer.EncodedObjectStorer, dir string, limits Limits) (Files, error) {
	root := path.Clean("./" + dir)
	if root != "." {
		sub, err := tree.Tree(root)
		if err != nil {
			return nil, fmt.Errorf("%w: directory %q not found in the repository: %v", ErrInvalidContent, dir, err)
		}
		tree = sub
	}
	files := Files{}
	var total int64
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		name, entry, err := walker.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("walk repository tree: %w", err)
		}
		switch entry.Mode {
		case filemode.Dir:
			files[name+"/"] = nil
			continue
		case filemode.Regular, filemode.Executable, filemode.Deprecated:
		default:
			// Symlinks and submodules: a bundle is plain files.
			continue
		}
		size, err := objects.EncodedObjectSize(entry.Hash)
		if err != nil {
			return nil, fmt.Errorf("read %q: %w", name, err)
		}
		if err := limits.Admit(name, size, &total, len(files)); err != nil {
			return nil, err
		}
		blob, err := tree.TreeEntryFile(&entry)
		if err != nil {
			return nil, fmt.Errorf("read %q: %w", name, err)
		}
		text, err := blob.Contents()
		if err != nil {
			return nil, fmt.Errorf("read %q: %w", name, err)
		}
		files[name] = []byte(text)
	}
}

// gitAuth follows rukpak: http(s) repositories use basic auth, anything
// else ssh as user git with the Secret's key, the host pinned by its
// known_hosts unless verification is skipped.
func gitAuth(opts GitOptions) (transport.AuthMethod, error) {
	if strings.HasPrefix(opts.Repository, "http") {
		if opts.Username == "" && opts.Password == "" {
			return nil, nil
		}
		return &githttp.BasicAuth{Username: opts.Username, Password: opts.Password}, nil
	}
	if len(opts.SSHPrivateKey) == 0 {
		return nil, nil
	}
	keys, err := gitssh.NewPublicKeys("git", opts.SSHPrivateKey, "")
	if err != nil {
		return nil, fmt.Errorf("%w: ssh-privatekey: %v", ErrInvalidContent, err)
	}
	switch {
	case opts.InsecureSkipVerify:
		keys.HostKeyCallback = ssh.InsecureIgnoreHostKey() //nolint:gosec // the user asked for it on this BundleDeployment only
	case len(opts.SSHKnownHosts) > 0:
		cb, err := knownHostsCallback(opts.SSHKnownHosts)
		if err != nil {
			return nil, err
		}
		keys.HostKeyCallback = cb
	default:
		return nil, fmt.Errorf("%w: the auth Secret has no ssh-knownhosts; add the server's known_hosts line or set auth.insecureSkipVerify", ErrInvalidContent)
	}
	return keys, nil
}

// knownHostsCallback checks host keys against the Secret's known_hosts.
// The library reads only files, so the lines go through a private temp
// file that is removed at once.
func knownHostsCallback(data []byte) (ssh.HostKeyCallback, error) {
	f, err := os.CreateTemp("", "known_hosts")
	if err != nil {
		return nil, fmt.Errorf("write known_hosts: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, fmt.Errorf("write known_hosts: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write known_hosts: %w", err)
	}
	cb, err := knownhosts.New(f.Name())
	if err != nil {
		return nil, fmt.Errorf("%w: ssh-knownhosts: %v", ErrInvalidContent, err)
	}
	return cb, nil
}
