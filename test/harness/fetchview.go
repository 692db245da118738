package harness

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// fetchView is the network as the processes that fetch bundle content (the
// adapter and kapp-controller) see it when the harness serves host names of
// the real world, such as github.com, on loopback: each such process runs
// in a mount namespace of its own in which a hosts file of the harness is
// bound over /etc/hosts (Go's resolver and git's both read it; nothing else
// on the machine sees it), and it trusts webCA alongside the system roots
// (SSL_CERT_FILE for Go, GIT_SSL_CAINFO for git), as a cluster's trust
// store trusts the public CAs that sign those names' certificates.
type fetchView struct {
	sandbox   string
	hostsFile string
	certFile  string
	webCA     *TestCA
}

// systemRoots are where Go looks for the system's CA bundle on Linux
// (crypto/x509's root_linux.go), in its order.
var systemRoots = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/tls/cacert.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
}

// newFetchView writes the hosts file (this machine's, plus names, each
// host name to its loopback address) and the trust bundle under dir.
func (e *Env) newFetchView(ctx context.Context, dir string, names map[string]string, webCA *TestCA) (*fetchView, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("serving real host names (github.com, ...) to the adapter and kapp-controller needs root: " +
			"each runs in a mount namespace of its own with the harness's hosts file bound over /etc/hosts (CI runs as root)")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	hosts, err := os.ReadFile("/etc/hosts")
	if err != nil {
		return nil, fmt.Errorf("read /etc/hosts to extend it: %w", err)
	}
	v := &fetchView{hostsFile: filepath.Join(dir, "hosts"), certFile: filepath.Join(dir, "ca-certificates.crt"), webCA: webCA}
	if err := os.WriteFile(v.hostsFile, []byte(hostsServing(hosts, names)), 0o644); err != nil {
		return nil, err
	}
	var roots []byte
	for _, f := range systemRoots {
		if data, err := os.ReadFile(f); err == nil {
			roots = data
			break
		}
	}
	if err := os.WriteFile(v.certFile, append(append(roots, '\n'), webCA.PEM...), 0o644); err != nil {
		return nil, err
	}
	if v.sandbox, err = e.privateMounts(ctx); err != nil {
		return nil, err
	}
	return v, nil
}

// hostsServing is the machine's hosts file with names, each host name to
// its loopback address. The machine's lines that name a served host go:
// the first line naming a host wins (localhost, for one, is 127.0.0.1
// there).
func hostsServing(machine []byte, names map[string]string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(string(machine), "\n"), "\n") {
		fields := strings.Fields(strings.SplitN(line, "#", 2)[0])
		if len(fields) > 1 && slices.ContainsFunc(fields[1:], func(n string) bool { _, served := names[n]; return served }) {
			b.WriteString("# served by the harness instead: " + line + "\n")
			continue
		}
		b.WriteString(line + "\n")
	}
	b.WriteString("\n# served on loopback by the rukpak-kapp test harness\n")
	for _, name := range slices.Sorted(maps.Keys(names)) {
		fmt.Fprintf(&b, "%s %s\n", names[name], name)
	}
	return b.String()
}

// privateMounts builds test/harness/cmd/privatemounts once per harness.
func (e *Env) privateMounts(ctx context.Context) (string, error) {
	sandbox := filepath.Join(e.Dir, "privatemounts")
	if _, err := os.Stat(sandbox); err == nil {
		return sandbox, nil
	}
	return GoBinary(ctx, e.Root, "./test/harness/cmd/privatemounts", sandbox)
}

// startFetcher starts a process that fetches bundle content: in the fetch
// view when there is one, with binds (SOURCE:TARGET) of its own in a mount
// namespace of its own when there are any.
func (t *toolEnv) startFetcher(name, dir string, env, binds []string, sandbox, bin string, args ...string) (*process, error) {
	if t.view != nil {
		binds = append(append([]string{}, binds...), t.view.hostsFile+":/etc/hosts")
		env = append(append([]string{}, env...), "SSL_CERT_FILE="+t.view.certFile)
		sandbox = t.view.sandbox
	}
	if len(binds) == 0 {
		return startProcess(name, dir, env, t.logDir, bin, args...)
	}
	argv := append(append(append([]string{}, binds...), "--", bin), args...)
	return startProcessWith(name, dir, env, t.logDir, &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}, sandbox, argv...)
}

// trustedByGit is what kapp-controller's git trusts: the CA that stands for
// a cluster's caCerts and, in the fetch view, the web's.
func (t *toolEnv) trustedByGit(cluster *TestCA) []byte {
	pem := append([]byte{}, cluster.PEM...)
	if t.view != nil {
		pem = append(append(pem, '\n'), t.view.webCA.PEM...)
	}
	return pem
}
