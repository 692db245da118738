package harness

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"time"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness/podspec"
)

// ProxiedDomain holds the host names only a Proxy reaches: none resolves,
// so a fetch of one succeeds only through the proxy. Every serving
// certificate of the harness names *.ProxiedDomain too.
const ProxiedDomain = "proxied.test"

// Proxy is an HTTP forward proxy on loopback, standing for a company's: it
// tunnels CONNECT (https) and forwards absolute-form requests (http), to
// NAME.ProxiedDomain:PORT as 127.0.0.1:PORT and to nothing else. It counts
// what it carried by authority.
type Proxy struct {
	// URL is the proxy's address, for HTTPS_PROXY or kapp-controller-config.
	URL    string
	mu     sync.Mutex
	seen   map[string]int
	server *http.Server
}

// StartProxy serves a proxy on a free loopback port.
func StartProxy() (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for proxy: %w", err)
	}
	p := &Proxy{URL: "http://" + l.Addr().String(), seen: map[string]int{}}
	p.server = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.server.Serve(l) }()
	return p, nil
}

// ProxiedHost is the name of the loopback server at hostPort (127.0.0.1:PORT)
// that only the proxy reaches: NAME.ProxiedDomain:PORT.
func ProxiedHost(name, hostPort string) string {
	_, port, _ := net.SplitHostPort(hostPort)
	return name + "." + ProxiedDomain + ":" + port
}

// Carried is how many requests (https: tunnels) the proxy carried to
// authority (host:port).
func (p *Proxy) Carried(authority string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[authority]
}

// Stop closes the proxy; tunnels open end with their clients.
func (p *Proxy) Stop() { _ = p.server.Close() }

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	authority := r.Host
	if r.Method != http.MethodConnect {
		authority = r.URL.Host
	}
	target, ok := proxiedTarget(authority)
	if !ok {
		http.Error(w, "this proxy reaches only *."+ProxiedDomain+":PORT", http.StatusForbidden)
		return
	}
	p.mu.Lock()
	p.seen[authority]++
	p.mu.Unlock()
	if r.Method != http.MethodConnect {
		(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "http", target
			pr.Out.Host = authority
		}}).ServeHTTP(w, r)
		return
	}
	upstream, err := net.DialTimeout("tcp", target, 10*time.Second)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	// What the client sent after its CONNECT may be buffered already.
	if n := buf.Reader.Buffered(); n > 0 {
		early, _ := buf.Reader.Peek(n)
		if _, err := upstream.Write(early); err != nil {
			conn.Close()
			upstream.Close()
			return
		}
	}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		conn.Close()
		upstream.Close()
		return
	}
	podspec.Splice(conn, upstream)
}

// proxiedTarget is the loopback address NAME.ProxiedDomain:PORT stands for.
func proxiedTarget(authority string) (string, bool) {
	host, port, err := net.SplitHostPort(authority)
	if err != nil || !strings.HasSuffix(host, "."+ProxiedDomain) {
		return "", false
	}
	return net.JoinHostPort("127.0.0.1", port), true
}
