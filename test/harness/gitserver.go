package harness

import (
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// GitServer serves bare repositories over git's smart HTTP protocol
// (`git http-backend` as CGI) on loopback, optionally behind basic auth.
type GitServer struct {
	Host               string
	Username, Password string
	root, scheme       string
	server             *http.Server
	// Traffic is what the server received.
	Traffic *Traffic
}

// StartGitServer serves the repositories under a fresh directory, over
// HTTPS with a certificate from ca when ca is set (vendir sends basic auth
// to https remotes only).
func StartGitServer(dir, username, password string, ca *TestCA) (*GitServer, error) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("git is needed for the git server: %w", err)
	}
	root := filepath.Join(dir, "repos")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for git server: %w", err)
	}
	backend := &cgi.Handler{
		Path: gitBin,
		Args: []string{"http-backend"},
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	gs := &GitServer{Host: l.Addr().String(), Username: username, Password: password, root: root}
	gs.server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if username != "" {
			if u, p, ok := r.BasicAuth(); !ok || u != username || p != password {
				w.Header().Set("WWW-Authenticate", `Basic realm="rukpak-kapp-test"`)
				http.Error(w, "authentication required", http.StatusUnauthorized)
				return
			}
		}
		backend.ServeHTTP(w, r)
	})}
	gs.Traffic = newTraffic()
	gs.Traffic.watch(gs.server)
	gs.scheme, err = serve(gs.server, l, ca)
	return gs, err
}

// Repo is a bare repository on the server and a work tree to change it.
type Repo struct {
	URL  string
	work string
}

// NewRepo creates a bare repository name.git with one commit of files from
// dir placed under subdir, on branch main.
func (gs *GitServer) NewRepo(name, dir, subdir string) (*Repo, error) {
	return newRepoAt(filepath.Join(gs.root, name+".git"), filepath.Join(gs.root, "work-"+name), gs.URL(name), dir, subdir)
}

// URL is where the repository name.git is served, whether or not it
// exists.
func (gs *GitServer) URL(name string) string {
	return gs.scheme + "://" + gs.Host + "/" + name + ".git"
}

// newRepoAt creates the bare repository bare, known to clients as url, with
// one commit of dir's files under subdir on main, made in the work tree work.
func newRepoAt(bare, work, url, dir, subdir string) (*Repo, error) {
	r := &Repo{URL: url, work: work}
	if err := runGit("", "init", "--bare", "--initial-branch=main", bare); err != nil {
		return nil, err
	}
	if err := runGit("", "init", "--initial-branch=main", work); err != nil {
		return nil, err
	}
	if err := runGit(work, "remote", "add", "origin", bare); err != nil {
		return nil, err
	}
	return r, r.Commit(dir, subdir, "initial bundle")
}

// Commit replaces subdir's content with dir's, commits and pushes main.
func (r *Repo) Commit(dir, subdir, message string) error {
	target := filepath.Join(r.work, subdir)
	if err := os.RemoveAll(target); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	if err := exec.Command("cp", "-r", dir, target).Run(); err != nil {
		return fmt.Errorf("copy %s: %w", dir, err)
	}
	if err := runGit(r.work, "add", "-A"); err != nil {
		return err
	}
	if err := runGit(r.work, "commit", "-q", "--allow-empty", "-m", message); err != nil {
		return err
	}
	return runGit(r.work, "push", "-q", "origin", "main")
}

// Tag tags the current commit and pushes the tag.
func (r *Repo) Tag(tag string) error {
	if err := runGit(r.work, "tag", tag); err != nil {
		return err
	}
	return runGit(r.work, "push", "-q", "origin", tag)
}

// Head is the commit main points at.
func (r *Repo) Head() (string, error) {
	out, err := exec.Command("git", "-C", r.work, "rev-parse", "HEAD").Output()
	return strings.TrimSpace(string(out)), err
}

// Stop closes the server.
func (gs *GitServer) Stop() { _ = gs.server.Close() }

func runGit(dir string, args ...string) error {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=rukpak-kapp test", "GIT_AUTHOR_EMAIL=test@rukpak-kapp.invalid",
		"GIT_COMMITTER_NAME=rukpak-kapp test", "GIT_COMMITTER_EMAIL=test@rukpak-kapp.invalid")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}
