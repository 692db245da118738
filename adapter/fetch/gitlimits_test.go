package fetch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// historyServer is a git server on loopback (the harness's git
// http-backend, and ssh alongside it) with one repository whose bundle sits on
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
	gs, dir := startGitServer(tb)
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

// startGitServer serves repositories under a fresh directory with the
// harness's git http-backend.
func startGitServer(tb testing.TB) (*harness.GitServer, string) {
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
	return gs, dir
}

// allowingCopy copies the repository to one whose server allows what
// GitHub and GitLab allow: a client may ask for any commit reachable from
// the refs, not only for the refs' tips. git's default over protocol v0 (the
// only one go-git speaks) is to refuse. It returns the copy's name.
func (hs *historyServer) allowingCopy(tb testing.TB) string {
	tb.Helper()
	// The harness keeps repository NAME in <dir>/repos/NAME.git.
	repos := filepath.Join(hs.dir, "repos")
	copied := filepath.Join(repos, "history-allowing.git")
	for _, args := range [][]string{
		{"clone", "-q", "--bare", filepath.Join(repos, "history.git"), copied},
		{"-C", copied, "config", "uploadpack.allowReachableSHA1InWant", "true"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			tb.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	return "history-allowing"
}

// pin is the options for commit's deploy/ over http in repository repo.
func (hs *historyServer) pin(repo, commit string) GitOptions {
	return GitOptions{Repository: "http://" + hs.http.Host + "/" + repo + ".git", Commit: commit, Directory: "deploy"}
}

// pinSSH is the same over ssh.
func (hs *historyServer) pinSSH(repo, commit string) GitOptions {
	return GitOptions{
		Repository: hs.ssh.URL(repo), Commit: commit, Directory: "deploy",
		SSHPrivateKey: hs.ssh.ClientKey, SSHKnownHosts: hs.ssh.KnownHosts,
	}
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

// TestFetchGit_CommitUnderLargeHistory: a commit with a history over the
// limit behind it. Where the server will not send the commit alone, it is
// searched for in the history, and a history over the limit fails with a
// message that says so and what to do, as content that retrying cannot fix;
// what the server allows is fetched within the limit.
func TestFetchGit_CommitUnderLargeHistory(t *testing.T) {
	t.Parallel()
	hs := startHistoryServer(t, historyCommits, historyBlob)
	allowing := hs.allowingCopy(t)
	last := len(hs.commits) - 1

	t.Run("history over the limit", func(t *testing.T) {
		t.Parallel()
		_, err := FetchGit(context.Background(), hs.pin("history", hs.bundle), historyLimits())
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
	})

	tests := []struct {
		name   string
		opts   GitOptions
		commit string
	}{
		{name: "the server sends a commit alone (http)", opts: hs.pin(allowing, hs.bundle), commit: hs.bundle},
		{name: "the server sends a commit alone (ssh)", opts: hs.pinSSH(allowing, hs.bundle), commit: hs.bundle},
		{name: "a commit near a branch head is found by deepening (http)", opts: hs.pin("history", hs.commits[last-2]), commit: hs.commits[last-2]},
		{name: "a commit near a branch head is found by deepening (ssh)", opts: hs.pinSSH("history", hs.commits[last-3]), commit: hs.commits[last-3]},
		{name: "a short commit id near a branch head", opts: hs.pin("history", hs.commits[last-1][:10]), commit: hs.commits[last-1]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tree, err := FetchGit(context.Background(), tt.opts, historyLimits())
			if err != nil || tree.Commit != tt.commit {
				t.Fatalf("FetchGit = %+v, %v; want commit %s", tree, err, tt.commit)
			}
			if got, want := paths(tree.Files), "manifests/,manifests/cm.yaml"; got != want {
				t.Errorf("files = %s, want %s", got, want)
			}
		})
	}
}

// TestFetchGit_CommitNotOnServer: a server that allows any reachable commit
// and refuses this one does not have it; nothing else is fetched to look.
func TestFetchGit_CommitNotOnServer(t *testing.T) {
	t.Parallel()
	hs := startHistoryServer(t, 2, 1<<10)
	allowing := hs.allowingCopy(t)
	limits := DefaultLimits
	limits.MaxFetchBytes = 1 << 10
	missing := strings.Repeat("ab", 20)
	for _, opts := range []GitOptions{hs.pin(allowing, missing), hs.pinSSH(allowing, missing)} {
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
	opts := hs.pin("history", "")
	opts.Branch = "main"
	_, err := FetchGit(context.Background(), opts, limits)
	if !errors.Is(err, ErrInvalidContent) || !strings.Contains(err.Error(), "limit of 32768 bytes") || !strings.Contains(err.Error(), "smaller repository") {
		t.Fatalf("error = %v, want ErrInvalidContent naming the limit and what to do", err)
	}
}

// TestFetchGit_SizeCheckedBeforeInflating: zeros pack into almost nothing,
// so the bytes received do not bound what a file inflates to. An object over
// MaxFetchBytes is refused from its header before go-git's indexer inflates
// it; a file over MaxFileBytes is refused from its header, not after it was
// read. Not parallel, so that the bytes allocated are this test's.
func TestFetchGit_SizeCheckedBeforeInflating(t *testing.T) {
	gs, dir := startGitServer(t)
	tests := []struct {
		name   string
		zeros  int
		limits Limits
		want   string
		// most is what the fetch may allocate: go-git's indexer inflates
		// each object it admits once.
		most uint64
	}{
		{
			name: "object over MaxFetchBytes", zeros: 64 << 20, limits: Limits{MaxFileBytes: 128 << 20, MaxTotalBytes: 128 << 20, MaxFiles: 10, MaxFetchBytes: 32 << 20},
			want: "inflates to 67108864 bytes, over the limit of 33554432 bytes", most: 4 << 20,
		},
		{name: "file over MaxFileBytes", zeros: 16 << 20, limits: DefaultLimits, want: "is 16777216 bytes, over the limit of 8388608", most: 24 << 20},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bundle := filepath.Join(dir, fmt.Sprint("bundle", i))
			writeFile(t, filepath.Join(bundle, "manifests", "zeros.yaml"), make([]byte, tt.zeros))
			repo, err := gs.NewRepo(fmt.Sprint("zeros", i), bundle, "deploy")
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err = FetchGit(context.Background(), GitOptions{Repository: repo.URL, Branch: "main", Directory: "deploy"}, tt.limits)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrInvalidContent) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want ErrInvalidContent saying %q", err, tt.want)
			}
			if allocated := after.TotalAlloc - before.TotalAlloc; allocated > tt.most {
				t.Errorf("the fetch allocated %d bytes, more than %d: the file was inflated before its size was checked", allocated, tt.most)
			}
		})
	}
}
