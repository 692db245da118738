package fetch

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// gitRepo makes a repository with the real git: a first commit tagged v1
// on main, then a second commit on main. It returns the URL and commits.
func gitRepo(t *testing.T) (url, first, second string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t.invalid")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write := func(name, data string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q", "--initial-branch=main")
	write("deploy/manifests/a.yaml", "a: 1")
	write("README.md", "r")
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "deploy", "manifests", "escape.yaml")); err != nil {
		t.Fatal(err)
	}
	run("add", "-A")
	run("commit", "-q", "-m", "first")
	run("tag", "v1")
	run("tag", "-a", "-m", "annotated", "v1-annotated")
	first = run("rev-parse", "HEAD")
	write("deploy/manifests/b.yaml", "b: 2")
	run("add", "-A")
	run("commit", "-q", "-m", "second")
	second = run("rev-parse", "HEAD")
	return "file://" + dir, first, second
}

func TestFetchGit(t *testing.T) {
	t.Parallel()
	url, first, second := gitRepo(t)
	tests := []struct {
		name       string
		opts       GitOptions
		wantCommit string
		wantFiles  []string
		wantErr    string
	}{
		{name: "branch", opts: GitOptions{Branch: "main", Directory: "deploy"}, wantCommit: second, wantFiles: []string{"manifests/", "manifests/a.yaml", "manifests/b.yaml"}},
		{name: "tag", opts: GitOptions{Tag: "v1", Directory: "./deploy"}, wantCommit: first, wantFiles: []string{"manifests/", "manifests/a.yaml"}},
		{name: "annotated tag", opts: GitOptions{Tag: "v1-annotated", Directory: "deploy"}, wantCommit: first, wantFiles: []string{"manifests/", "manifests/a.yaml"}},
		{name: "commit", opts: GitOptions{Commit: first}, wantCommit: first, wantFiles: []string{"README.md", "deploy/", "deploy/manifests/", "deploy/manifests/a.yaml"}},
		{name: "missing directory", opts: GitOptions{Branch: "main", Directory: "nope"}, wantErr: `directory "nope" not found`},
		{name: "missing commit", opts: GitOptions{Commit: strings.Repeat("a", 40)}, wantErr: "not found"},
		{name: "no ref", opts: GitOptions{}, wantErr: "no branch, tag or commit"},
		{name: "missing branch", opts: GitOptions{Branch: "nope"}, wantErr: "git fetch branch nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.opts.Repository = url
			tree, err := FetchGit(context.Background(), tt.opts, DefaultLimits)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("FetchGit: %v", err)
			}
			if tree.Commit != tt.wantCommit {
				t.Errorf("commit = %s, want %s", tree.Commit, tt.wantCommit)
			}
			if got, want := paths(tree.Files), strings.Join(sorted(tt.wantFiles), ","); got != want {
				t.Errorf("files = %s, want %s (symlinks are never read)", got, want)
			}
		})
	}
	head, err := RemoteHead(context.Background(), GitOptions{Repository: url, Branch: "main"})
	if err != nil || head != second {
		t.Errorf("RemoteHead = %s, %v; want %s", head, err, second)
	}
}

func TestFetchGit_Limits(t *testing.T) {
	t.Parallel()
	url, _, _ := gitRepo(t)
	_, err := FetchGit(context.Background(), GitOptions{Repository: url, Branch: "main"}, Limits{MaxFileBytes: 1 << 20, MaxTotalBytes: 1 << 20, MaxFiles: 2, MaxFetchBytes: 1 << 20})
	if err == nil || !strings.Contains(err.Error(), "more than 2 files") {
		t.Fatalf("error = %v, want a file count error", err)
	}
}

func TestGitAuth_SSHNeedsKnownHostsOrSkip(t *testing.T) {
	t.Parallel()
	_, err := gitAuth(GitOptions{Repository: "ssh://git@example.invalid/r.git", SSHPrivateKey: []byte("not a key")})
	if err == nil || !strings.Contains(err.Error(), "ssh-privatekey") {
		t.Fatalf("error = %v, want the key named", err)
	}
}

// paths lists the paths of files, sorted, for comparing.
func paths(files Files) string {
	var names []string
	for p := range files {
		names = append(names, p)
	}
	return strings.Join(sorted(names), ",")
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// The server's refusal of a commit reaches go-git either as git's words or,
// when upload-pack exited before go-git finished its request, as a closed
// input (TestFetchGit_CommitNotOnServer meets both, depending on timing).
func TestRefused(t *testing.T) {
	for _, tt := range []struct {
		err  string
		want bool
	}{
		{"unknown error: fatal: git upload-pack: not our ref abab", true},
		{"closing input: EOF", true},
		{"dial tcp 127.0.0.1:22: connect: connection refused", false},
		{"unexpected EOF", false},
	} {
		if got := refused(errors.New(tt.err)); got != tt.want {
			t.Errorf("refused(%q) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
