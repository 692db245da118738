package fetch

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	"golang.org/x/net/http/httpproxy"
)

// KappControllerConfigName is the Secret (read first) or ConfigMap in
// kapp-controller's namespace that tells kapp-controller which CAs to trust
// and which proxies to use.
const KappControllerConfigName = "kapp-controller-config"

// Network is what kapp-controller-config says about reaching servers, for
// the fetches the adapter makes itself to reach them as kapp-controller's do:
// its CAs alongside the system roots, its proxies with noProxy, and the hosts
// whose certificates are not verified. A nil *Network is the adapter's own
// environment (system roots, HTTPS_PROXY and the like), which is also what
// kapp-controller uses while no kapp-controller-config exists.
type Network struct {
	caCerts string
	roots   *x509.CertPool
	proxy   func(*url.URL) (*url.URL, error)
	skip    []string
	// err is what is wrong with the config; every fetch through it fails
	// with it, naming the key to fix.
	err error
}

// ParseNetwork reads kapp-controller-config's keys as kapp-controller reads
// them: caCerts (PEM), httpProxy, httpsProxy and noProxy (with
// KAPPCTRL_KUBERNETES_SERVICE_HOST standing for serviceHost), and
// dangerousSkipTLSVerify (hosts or host:ports, comma-separated). The proxies
// replace the environment's, an empty one meaning none, as kapp-controller
// sets (or clears) its own environment from them. source names the object
// ("the Secret kapp-controller/kapp-controller-config") in what is wrong
// with it.
func ParseNetwork(source string, data map[string]string, serviceHost string) *Network {
	n := &Network{caCerts: data["caCerts"]}
	var problems []string
	if strings.TrimSpace(n.caCerts) != "" {
		n.roots = systemRoots()
		if !n.roots.AppendCertsFromPEM([]byte(n.caCerts)) {
			problems = append(problems, "caCerts holds no PEM certificate")
		}
	}
	for _, key := range []string{"httpProxy", "httpsProxy"} {
		if err := checkProxy(data[key]); err != nil {
			// The value may carry a password: it is never repeated.
			problems = append(problems, fmt.Sprintf("%s is not a proxy URL: %v", key, err))
		}
	}
	if len(problems) > 0 {
		// One line, as a condition message shows it.
		n.err = fmt.Errorf("%s, which the adapter's fetches follow as kapp-controller's do, cannot be used: %s", source, strings.Join(problems, "; "))
	}
	noProxy := strings.Replace(data["noProxy"], "KAPPCTRL_KUBERNETES_SERVICE_HOST", serviceHost, 1)
	n.proxy = (&httpproxy.Config{HTTPProxy: data["httpProxy"], HTTPSProxy: data["httpsProxy"], NoProxy: noProxy}).ProxyFunc()
	for _, h := range strings.Split(data["dangerousSkipTLSVerify"], ",") {
		if h = strings.TrimSpace(h); h != "" {
			n.skip = append(n.skip, h)
		}
	}
	return n
}

// checkProxy parses a proxy as httpproxy does (a bare host:port is http),
// saying only what is wrong, never the value.
func checkProxy(p string) error {
	if p == "" {
		return nil
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme == "" || u.Host == "" {
		u, err = url.Parse("http://" + p)
	}
	if err != nil || u.Host == "" {
		return errors.New("it names no host")
	}
	switch u.Scheme {
	case "http", "https", "socks5", "socks5h":
		return nil
	}
	return fmt.Errorf("scheme %q is not http, https or socks5", u.Scheme)
}

func systemRoots() *x509.CertPool {
	// SystemCertPool returns a copy; adding to it changes no other pool.
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		return x509.NewCertPool()
	}
	return pool
}

// Err is what is wrong with the config, nil when nothing is.
func (n *Network) Err() error {
	if n == nil {
		return nil
	}
	return n.err
}

// CACerts is the config's PEM, "" when it names none.
func (n *Network) CACerts() string {
	if n == nil {
		return ""
	}
	return n.caCerts
}

// ProxyFor is the proxy a request to u goes through, nil for none.
func (n *Network) ProxyFor(u *url.URL) (*url.URL, error) {
	if n == nil {
		return http.ProxyFromEnvironment(&http.Request{URL: u})
	}
	return n.proxy(u)
}

// SkipsVerify says whether dangerousSkipTLSVerify names authority (host or
// host:port), matched as kapp-controller matches it: the host alone or the
// whole authority.
func (n *Network) SkipsVerify(authority string) bool {
	if n == nil {
		return false
	}
	host, _, err := net.SplitHostPort(authority)
	if err != nil {
		host = authority
	}
	for _, s := range n.skip {
		if s == host || s == authority {
			return true
		}
	}
	return false
}

// rootsWith is the pool to verify servers with: the system roots, the
// config's CAs and extraPEM (a BundleDeployment's own certificateData); nil
// (Go's default, the system roots) when neither adds any.
func (n *Network) rootsWith(extraPEM string) (*x509.CertPool, error) {
	var base *x509.CertPool
	if n != nil {
		base = n.roots
	}
	if extraPEM == "" {
		return base, nil
	}
	pool := systemRoots()
	if base != nil {
		// The config's pool, parsed once; the copy keeps it as it is.
		pool = base.Clone()
	}
	if !pool.AppendCertsFromPEM([]byte(extraPEM)) {
		return nil, fmt.Errorf("%w: certificateData holds no PEM certificate", ErrInvalidContent)
	}
	return pool, nil
}

// NetworkHolder hands the current Network from the watch of
// kapp-controller-config to every fetch; its zero value holds none (nil).
type NetworkHolder struct{ p atomic.Pointer[Network] }

// Load is the Network now; nil for a nil holder or before any config.
func (h *NetworkHolder) Load() *Network {
	if h == nil {
		return nil
	}
	return h.p.Load()
}

// Store replaces the Network; nil goes back to the environment.
func (h *NetworkHolder) Store(n *Network) { h.p.Store(n) }
