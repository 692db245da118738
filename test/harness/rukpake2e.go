package harness

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What rukpak v0.24.0's end-to-end suite (package test/e2e of its module)
// expects of its cluster as well as rukpak itself: the names below, the
// Secrets that startRukpakE2E makes, and github.com.
const (
	// RukpakE2ENamespace held rukpak's test registries and git server.
	RukpakE2ENamespace = "rukpak-e2e"
	// RukpakImageRepo is the suite's ImageRepo as built, unchanged.
	RukpakImageRepo          = rukpakRegistryName + ":5000/bundles"
	rukpakRegistryName       = "docker-registry.rukpak-e2e.svc.cluster.local"
	rukpakSecureRegistryName = "docker-registry-secure.rukpak-e2e.svc.cluster.local"
	rukpakLocalGitName       = "local-git.rukpak-e2e.svc.cluster.local"
	// RukpakLocalGitRepo is the suite's ssh repository (a clone of
	// operator-framework/combo), read with the Secret gitsecret.
	RukpakLocalGitRepo = "ssh://git@" + rukpakLocalGitName + ":2222/git-server/repos/combo"
	// The secure registry's credentials (rukpak's image-registry-secure.sh).
	rukpakSecureUser, rukpakSecurePassword = "myuser", "mypasswd"
	// rukpakE2EModule is the wrapper module that pins rukpak v0.24.0 for its
	// suite (test/tools/rukpak-e2e).
	rukpakE2EModule = "test/tools/rukpak-e2e"
)

// githubNames are served by one HTTPS server: git repositories and
// downloads on github.com, files on raw.githubusercontent.com.
var githubNames = []string{"github.com", "raw.githubusercontent.com"}

// RukpakE2E is what the harness serves for rukpak's end-to-end suite, on
// loopback addresses that the suite's names resolve to in the adapter's and
// kapp-controller's view of the network (fetchview.go): an image registry
// over TLS holding rukpak's testdata bundles (its CA in the Secret
// rukpak-e2e/rukpak-e2e-registry), a secure registry behind basic auth
// (Secret secureregistrysecret), the ssh git server (Secret gitsecret) and
// github.com's repositories and files the specs name
// (test/testdata/rukpak-e2e-sources).
type RukpakE2E struct {
	// ModuleDir is rukpak v0.24.0's module: the suite runs from its
	// test/e2e, whose specs read ../../testdata.
	ModuleDir      string
	Registry       *Registry
	SecureRegistry *Registry
	SSHGit         *SSHGitServer
	// LocalGitCommit is main's commit in RukpakLocalGitRepo.
	LocalGitCommit string
	web            *http.Server
}

// rukpakE2EListeners are the suite's servers' sockets, on the ports its
// names carry: github.com's HTTPS (443), the two registries (5000) and the
// git server (2222).
type rukpakE2EListeners struct {
	web, registry, secure, git net.Listener
	names                      map[string]string
}

func (ls *rukpakE2EListeners) close() {
	for _, l := range []net.Listener{ls.web, ls.registry, ls.secure, ls.git} {
		_ = l.Close()
	}
}

// startRukpakE2E starts what the suite expects, before kapp-controller and
// the adapter start in the view it sets up.
func (e *Env) startRukpakE2E(ctx context.Context) error {
	moduleDir, err := e.rukpakModuleDir(ctx)
	if err != nil {
		return err
	}
	ls, err := listenRukpakE2E()
	if err != nil {
		return err
	}
	served := false
	defer func() {
		if !served {
			ls.close()
		}
	}()
	webCA, err := NewTestCA("rukpak-kapp harness web CA (stands for the public CAs)")
	if err != nil {
		return err
	}
	if e.tools.view, err = e.newFetchView(ctx, filepath.Join(e.Dir, "fetchview"), ls.names, webCA); err != nil {
		return err
	}
	r := &RukpakE2E{ModuleDir: moduleDir}
	e.RukpakE2E = r
	registryCA, err := NewTestCA("rukpak-e2e-registry")
	if err != nil {
		return err
	}
	if r.Registry, err = serveRegistry(ls.registry, rukpakRegistryName+":5000", "", "", registryCA); err != nil {
		return err
	}
	secureCA, err := NewTestCA("rukpak-e2e-registry-secure")
	if err != nil {
		return err
	}
	if r.SecureRegistry, err = serveRegistry(ls.secure, rukpakSecureRegistryName+":5000", rukpakSecureUser, rukpakSecurePassword, secureCA); err != nil {
		return err
	}
	sources := filepath.Join(e.Root, "test", "testdata", "rukpak-e2e-sources")
	if r.web, err = e.serveGitHub(ctx, ls.web, sources, webCA); err != nil {
		return err
	}
	gitRoot := filepath.Join(e.Dir, "local-git")
	if r.LocalGitCommit, err = commitTree(filepath.Join(gitRoot, "git-server", "repos", "combo"), filepath.Join(gitRoot, "work-combo"), filepath.Join(sources, "operator-framework-combo")); err != nil {
		return err
	}
	if r.SSHGit, err = serveSSHGit(ls.git, gitRoot, rukpakLocalGitName); err != nil {
		return err
	}
	served = true
	if err := e.rukpakE2ESecrets(ctx, registryCA, secureCA); err != nil {
		return err
	}
	return r.pushBundles()
}

// rukpakModuleDir is where Go keeps rukpak v0.24.0's module, as pinned by
// the wrapper module, downloading it if need be: the suite's binary may come
// from the tool cache while the module cache is empty (go clean -modcache),
// and go list -m alone then names no directory.
func (e *Env) rukpakModuleDir(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", "github.com/operator-framework/rukpak")
	cmd.Dir = filepath.Join(e.Root, rukpakE2EModule)
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("download rukpak v0.24.0's module from %s: %w", rukpakE2EModule, err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return "", fmt.Errorf("read go mod download's answer for rukpak v0.24.0: %w", err)
	}
	if mod.Dir == "" {
		return "", fmt.Errorf("rukpak v0.24.0's module was not downloaded: %s", mod.Error)
	}
	return mod.Dir, nil
}

// listenRukpakE2E opens the servers' sockets on four addresses of a
// loopback /24 picked at random (so two harnesses on one machine rarely
// meet, and the fixed ports stay free of anything else), and names them.
func listenRukpakE2E() (*rukpakE2EListeners, error) {
	var last error
	for range 20 {
		base := fmt.Sprintf("127.%d.%d.", 1+rand.IntN(254), rand.IntN(256))
		var opened []net.Listener
		listen := func(host, port string) net.Listener {
			if last != nil {
				return nil
			}
			l, err := net.Listen("tcp", net.JoinHostPort(host, port))
			if err != nil {
				last = err
				return nil
			}
			opened = append(opened, l)
			return l
		}
		last = nil
		ls := &rukpakE2EListeners{
			web: listen(base+"1", "443"), registry: listen(base+"2", "5000"),
			secure: listen(base+"3", "5000"), git: listen(base+"4", "2222"),
		}
		if last == nil {
			ls.names = map[string]string{rukpakRegistryName: base + "2", rukpakSecureRegistryName: base + "3", rukpakLocalGitName: base + "4"}
			for _, n := range githubNames {
				ls.names[n] = base + "1"
			}
			return ls, nil
		}
		for _, l := range opened {
			_ = l.Close()
		}
	}
	return nil, fmt.Errorf("listen on loopback for rukpak's test servers (ports 443, 5000, 2222 need root): %w", last)
}

// serveGitHub serves, over HTTPS with a certificate from webCA, the
// repositories and files of github.com and raw.githubusercontent.com that
// the suite names (test/testdata/rukpak-e2e-sources/README.md).
func (e *Env) serveGitHub(ctx context.Context, l net.Listener, sources string, webCA *TestCA) (*http.Server, error) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("git is needed for the git server: %w", err)
	}
	root := filepath.Join(e.Dir, "github")
	repos := filepath.Join(root, "repos")
	for bundle, names := range map[string][]string{
		"exdx-combo-bundle.bundle": {"exdx/combo-bundle", "exdx/combo-bundle.git"},
		"helm-examples.bundle":     {"helm/examples", "helm/examples.git"},
	} {
		for _, name := range names {
			bare := filepath.Join(repos, filepath.FromSlash(name))
			if err := runGit("", "clone", "--quiet", "--bare", filepath.Join(sources, bundle), bare); err != nil {
				return nil, err
			}
			if err := runGit(bare, "symbolic-ref", "HEAD", "refs/heads/main"); err != nil {
				return nil, err
			}
		}
	}
	examples := filepath.Join(repos, "helm", "examples")
	files := map[string][]byte{}
	if files["github.com/helm/examples/releases/download/hello-world-0.1.0/hello-world-0.1.0.tgz"], err = e.packageChart(ctx, examples, root); err != nil {
		return nil, err
	}
	if files["github.com/helm/examples/archive/refs/tags/hello-world-0.1.0.tar.gz"], err = gitOutput(examples, "archive", "--format=tar.gz", "--prefix=examples-hello-world-0.1.0/", "hello-world-0.1.0"); err != nil {
		return nil, err
	}
	if files["raw.githubusercontent.com/helm/examples/main/LICENSE"], err = gitOutput(examples, "show", "main:LICENSE"); err != nil {
		return nil, err
	}
	backend := &cgi.Handler{Path: gitBin, Args: []string{"http-backend"}, Env: []string{"GIT_PROJECT_ROOT=" + repos, "GIT_HTTP_EXPORT_ALL=1"}}
	server := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if data, ok := files[host+r.URL.Path]; ok {
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(data)
			return
		}
		if host == "github.com" && isGitRequest(r.URL.Path) {
			backend.ServeHTTP(w, r)
			return
		}
		http.NotFound(w, r)
	})}
	cfg, err := webCA.ServerConfigFor(githubNames...)
	if err != nil {
		return nil, err
	}
	server.TLSConfig = cfg
	go func() { _ = server.ServeTLS(l, "", "") }()
	return server, nil
}

func isGitRequest(path string) bool {
	return strings.HasSuffix(path, "/info/refs") || strings.HasSuffix(path, "/git-upload-pack") ||
		strings.HasSuffix(path, "/HEAD") || strings.Contains(path, "/objects/")
}

// packageChart is the hello-world chart at its release tag, packaged as the
// chart-releaser workflow of helm/examples does: `helm package`.
func (e *Env) packageChart(ctx context.Context, repo, dir string) ([]byte, error) {
	src := filepath.Join(dir, "chart-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return nil, err
	}
	archive := exec.CommandContext(ctx, "sh", "-c", `git archive hello-world-0.1.0 charts/hello-world | tar -x -C "$1"`, "sh", src)
	archive.Dir = repo
	if out, err := archive.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("extract charts/hello-world at hello-world-0.1.0: %w: %s", err, out)
	}
	out := filepath.Join(dir, "chart")
	helm := exec.CommandContext(ctx, filepath.Join(e.tools.bin, "helm"), "package", filepath.Join(src, "charts", "hello-world"), "-d", out)
	helm.Env = append(e.tools.base, "HOME="+dir)
	if msg, err := helm.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("helm package hello-world: %w: %s", err, msg)
	}
	return os.ReadFile(filepath.Join(out, "hello-world-0.1.0.tgz"))
}

func gitOutput(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, exit.Stderr)
		}
		return nil, fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}

// commitTree makes the bare repository bare with one commit of dir's
// files on main, and returns the commit.
func commitTree(bare, work, dir string) (string, error) {
	for _, args := range [][]string{{"init", "--quiet", "--bare", "--initial-branch=main", bare}, {"init", "--quiet", "--initial-branch=main", work}} {
		if err := runGit("", args...); err != nil {
			return "", err
		}
	}
	if err := exec.Command("cp", "-r", dir+"/.", work).Run(); err != nil {
		return "", fmt.Errorf("copy %s: %w", dir, err)
	}
	for _, args := range [][]string{{"remote", "add", "origin", bare}, {"add", "-A"}, {"commit", "--quiet", "-m", "operator-framework/combo at f5a3711"}, {"push", "--quiet", "origin", "main"}} {
		if err := runGit(work, args...); err != nil {
			return "", err
		}
	}
	return (&Repo{work: work}).Head()
}

// rukpakE2ESecrets makes the Secrets the suite and its specs name, as
// rukpak's test scripts made them (cert-manager's TLS Secrets, `kubectl
// create secret docker-registry`, the ssh key and known hosts).
func (e *Env) rukpakE2ESecrets(ctx context.Context, registryCA, secureCA *TestCA) error {
	if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: RukpakE2ENamespace}}); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("create namespace %s: %w", RukpakE2ENamespace, err)
	}
	var secrets []*corev1.Secret
	for name, ca := range map[string]*TestCA{"rukpak-e2e-registry": registryCA, "rukpak-e2e-registry-secure": secureCA} {
		host := rukpakRegistryName
		if ca == secureCA {
			host = rukpakSecureRegistryName
		}
		cert, key, err := ca.ServingPEM(strings.TrimSuffix(host, ".cluster.local"), host)
		if err != nil {
			return err
		}
		secrets = append(secrets, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: RukpakE2ENamespace},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{"ca.crt": ca.PEM, corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key},
		})
	}
	auth := rukpakSecureUser + ":" + rukpakSecurePassword
	dockerConfig, err := json.Marshal(map[string]any{"auths": map[string]any{rukpakSecureRegistryName + ":5000": map[string]string{
		"username": rukpakSecureUser, "password": rukpakSecurePassword, "email": "email@foo.com", "auth": base64.StdEncoding.EncodeToString([]byte(auth)),
	}}})
	if err != nil {
		return err
	}
	for _, ns := range []string{SystemNamespace, RukpakE2ENamespace} {
		secrets = append(secrets, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "secureregistrysecret", Namespace: ns},
			Type:       corev1.SecretTypeDockerConfigJson,
			Data:       map[string][]byte{corev1.DockerConfigJsonKey: dockerConfig},
		})
	}
	secrets = append(secrets, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "gitsecret", Namespace: SystemNamespace},
		Type:       corev1.SecretTypeSSHAuth,
		Data:       map[string][]byte{corev1.SSHAuthPrivateKey: e.RukpakE2E.SSHGit.ClientKey, "ssh-knownhosts": e.RukpakE2E.SSHGit.KnownHosts},
	})
	for _, s := range secrets {
		if err := e.Client.Create(ctx, s); err != nil {
			return fmt.Errorf("create secret %s/%s: %w", s.Namespace, s.Name, err)
		}
	}
	return nil
}

// pushBundles pushes rukpak's testdata bundles as its Makefile tagged them
// (kind-load-bundles, registry-load-bundles, secure-registry-load-bundles).
func (r *RukpakE2E) pushBundles() error {
	bundles := filepath.Join(r.ModuleDir, "testdata", "bundles")
	for _, kind := range []string{"plain-v0", "registry"} {
		entries, err := os.ReadDir(filepath.Join(bundles, kind))
		if err != nil {
			return err
		}
		for _, b := range entries {
			if _, _, err := r.Registry.PushDockerContext(filepath.Join(bundles, kind, b.Name()), "bundles/"+kind+":"+b.Name()); err != nil {
				return err
			}
		}
	}
	_, _, err := r.SecureRegistry.PushDockerContext(filepath.Join(bundles, "plain-v0", "valid"), "bundles/plain-v0:valid")
	return err
}

// Stop closes the servers.
func (r *RukpakE2E) Stop() {
	for _, reg := range []*Registry{r.Registry, r.SecureRegistry} {
		if reg != nil {
			reg.Stop()
		}
	}
	if r.SSHGit != nil {
		r.SSHGit.Stop()
	}
	if r.web != nil {
		_ = r.web.Close()
	}
}
