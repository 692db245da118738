package fetch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// historyServer is a git server on loopback (the harness's git
// http-backend, and ssh beside it) with one repository whose bundle sits on
// top of a large history.
type historyServer struct {
	http *harness.GitServer
	ssh  *harness.SSHGitServer
	dir  string
	// bundle is the first commit: the bundle alone, under deploy/.
	bundle string
	// commits are the later ones, oldest first: each replaces data/blob
	// with blobBytes of incompressible data, so no two share any.
	commits []string
}

// startHistoryServer makes that repository with n data commits of
// blobBytes each.
func startHistoryServer(tb testing.TB, n, blobBytes int) *historyServer {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git is not installed")
	}
	dir := tb.TempDir()
	gs, err := harness.StartGitServer(dir, "", "", nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(gs.Stop)
	ss, err := harness.StartSSHGitServer(gs)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(ss.Stop)
	hs := &historyServer{http: gs, ssh: ss, dir: dir}

	bundle := filepath.Join(dir, "bundle")
	writeFile(tb, filepath.Join(bundle, "manifests", "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"))
	repo, err := gs.NewRepo("history", bundle, "deploy")
	if err != nil {
		tb.Fatal(err)
	}
	if hs.bundle, err = repo.Head(); err != nil {
		tb.Fatal(err)
	}
	rng := rand.New(rand.NewChaCha8([32]byte{}))
	data := filepath.Join(dir, "data")
	blob := make([]byte, blobBytes)
	for i := range n {
		for j := range blob {
			blob[j] = byte(rng.Uint32())
		}
		writeFile(tb, filepath.Join(data, "blob"), blob)
		if err := repo.Commit(data, "data", fmt.Sprintf("data %d", i)); err != nil {
			tb.Fatal(err)
		}
		head, err := repo.Head()
		if err != nil {
			tb.Fatal(err)
		}
		hs.commits = append(hs.commits, head)
	}
	return hs
}

// allowCommitWants sets what GitHub and GitLab allow: a client may
// ask for any commit reachable from the refs, not only for the refs' tips.
// git's default over protocol v0 (the only one go-git speaks) is to refuse.
func (hs *historyServer) allowCommitWants(tb testing.TB) {
	tb.Helper()
	// The harness keeps repository NAME under <dir>/repos/NAME.git.
	bare := filepath.Join(hs.dir, "repos", "history.git")
	if out, err := exec.Command("git", "-C", bare, "config", "uploadpack.allowReachableSHA1InWant", "true").CombinedOutput(); err != nil {
		tb.Fatalf("configure %s: %v: %s", bare, err, out)
	}
}

func (hs *historyServer) httpURL() string { return "http://" + hs.http.Host + "/history.git" }

func (hs *historyServer) sshOptions() GitOptions {
	return GitOptions{Repository: hs.ssh.URL("history"), SSHPrivateKey: hs.ssh.ClientKey, SSHKnownHosts: hs.ssh.KnownHosts}
}

func writeFile(tb testing.TB, name string, data []byte) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		tb.Fatal(err)
	}
}

const (
	historyCommits = 24
	historyBlob    = 256 << 10
	// historyLimit holds 8 of the 24 data commits: a commit's own files fit,
	// the history does not.
	historyLimit = 8 * historyBlob
)

func historyLimits() Limits {
	limits := DefaultLimits
	limits.MaxFetchBytes = historyLimit
	return limits
}

// TestFetchGit_CommitHistoryOverLimit: a commit the server will not send
// alone is searched for in the history, and a history over the limit fails
// with a message that says so and what to do, as content that retrying
// cannot fix.
func TestFetchGit_CommitHistoryOverLimit(t *testing.T) {
	t.Parallel()
	hs := startHistoryServer(t, historyCommits, historyBlob)
	_, err := FetchGit(context.Background(), GitOptions{Repository: hs.httpURL(), Commit: hs.bundle, Directory: "deploy"}, historyLimits())
	if err == nil {
		t.Fatal("FetchGit of a commit under a history over the limit succeeded")
	}
	if !errors.Is(err, ErrInvalidContent) {
		t.Errorf("error %v is not ErrInvalidContent, so it would be retried", err)
	}
	for _, want := range []string{fmt.Sprintf("limit of %d bytes", historyLimit), "history", "pin a tag or branch"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestFetchGit_CommitWithinLimit: what the server allows is fetched without
// the history that does not fit the limit.
func TestFetchGit_CommitWithinLimit(t *testing.T) {
	t.Parallel()
	hs := startHistoryServer(t, historyCommits, historyBlob)
	allowing := startHistoryServer(t, historyCommits, historyBlob)
	allowing.allowCommitWants(t)
	last := len(hs.commits) - 1
	sshOpts := allowing.sshOptions()
	sshOpts.Commit, sshOpts.Directory = allowing.bundle, "deploy"
	tests := []struct {
		name   string
		opts   GitOptions
		commit string
		files  []string
	}{
		{
			name: "the server sends a commit alone (http)",
			opts: GitOptions{Repository: allowing.httpURL(), Commit: allowing.bundle, Directory: "deploy"}, commit: allowing.bundle,
			files: []string{"manifests/", "manifests/cm.yaml"},
		},
		{name: "the server sends a commit alone (ssh)", opts: sshOpts, commit: allowing.bundle, files: []string{"manifests/", "manifests/cm.yaml"}},
		{
			name: "a commit near a branch head is found by deepening",
			opts: GitOptions{Repository: hs.httpURL(), Commit: hs.commits[last-2], Directory: "deploy"}, commit: hs.commits[last-2],
			files: []string{"manifests/", "manifests/cm.yaml"},
		},
		{
			name: "a short commit id near a branch head",
			opts: GitOptions{Repository: hs.httpURL(), Commit: hs.commits[last-1][:10], Directory: "deploy"}, commit: hs.commits[last-1],
			files: []string{"manifests/", "manifests/cm.yaml"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tree, err := FetchGit(context.Background(), tt.opts, historyLimits())
			if err != nil {
				t.Fatalf("FetchGit: %v", err)
			}
			if tree.Commit != tt.commit {
				t.Errorf("commit = %s, want %s", tree.Commit, tt.commit)
			}
			var got []string
			for p := range tree.Files {
				got = append(got, p)
			}
			if strings.Join(sorted(got), ",") != strings.Join(sorted(tt.files), ",") {
				t.Errorf("files = %v, want %v", sorted(got), tt.files)
			}
		})
	}
}

// TestFetchGit_CommitNotOnServer: a server that allows any reachable commit
// and refuses this one does not have it; nothing else is fetched to look.
func TestFetchGit_CommitNotOnServer(t *testing.T) {
	t.Parallel()
	hs := startHistoryServer(t, 2, 1<<10)
	hs.allowCommitWants(t)
	limits := DefaultLimits
	limits.MaxFetchBytes = 1 << 10
	missing := strings.Repeat("ab", 20)
	sshOpts := hs.sshOptions()
	sshOpts.Commit = missing
	for _, opts := range []GitOptions{{Repository: hs.httpURL(), Commit: missing}, sshOpts} {
		_, err := FetchGit(context.Background(), opts, limits)
		if !errors.Is(err, ErrInvalidContent) || !strings.Contains(err.Error(), "commit "+missing+" not found") {
			t.Errorf("%s: error = %v, want ErrInvalidContent saying the commit is not found", opts.Repository, err)
		}
	}
}

// TestFetchGit_RefOverLimit: a branch's own files over the limit fail with
// the limit named; no history is involved.
func TestFetchGit_RefOverLimit(t *testing.T) {
	t.Parallel()
	hs := startHistoryServer(t, 1, 64<<10)
	limits := DefaultLimits
	limits.MaxFetchBytes = 32 << 10
	_, err := FetchGit(context.Background(), GitOptions{Repository: hs.httpURL(), Branch: "main"}, limits)
	if !errors.Is(err, ErrInvalidContent) || !strings.Contains(err.Error(), "limit of 32768 bytes") || !strings.Contains(err.Error(), "smaller repository") {
		t.Fatalf("error = %v, want ErrInvalidContent naming the limit and what to do", err)
	}
}
