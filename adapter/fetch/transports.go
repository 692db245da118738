package fetch

import (
	"crypto/tls"
	"net/http"
	"net/url"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"k8s.io/utils/lru"
)

// The adapter's connections to one server are bounded whatever the number
// of objects that fetch from it: every fetch with the same network setting
// (kapp-controller-config's CAs and proxies, an object's own
// certificateData and skip of verification) shares one transport and its
// pool, which opens at most MaxConnsPerServer connections to a server and
// keeps them for the next fetch; at most MaxTransports settings are kept,
// the least recently used one's idle connections closed when it goes. Were
// each fetch to make its own transport, each would leave its connection
// open until the server or the idle timeout closed it: a failing object
// retried often would pile them up (thousands in a minute).
const (
	MaxConnsPerServer = 8
	MaxTransports     = 16
)

type transportKey struct {
	network  *Network
	extraPEM string
	insecure bool
}

// transports are the shared transports, by setting.
var transports = transportPool{kept: lru.NewWithEvictionFunc(MaxTransports, func(_ lru.Key, v any) {
	v.(*http.Transport).CloseIdleConnections()
})}

type transportPool struct {
	mu   sync.Mutex
	kept *lru.Cache
}

// transport is the shared transport that reaches host as n says (proxies,
// CAs alongside extraPEM and, where skippable, verification skipped for the
// hosts dangerousSkipTLSVerify names: registries and git servers, as
// kapp-controller skips, not http archives), skipping verification
// altogether when insecure (the object asked for it).
func (n *Network) transport(host, extraPEM string, insecure, skippable bool) (*http.Transport, error) {
	if err := n.Err(); err != nil {
		return nil, err
	}
	if n != nil && skippable && n.SkipsVerify(host) {
		insecure = true
	}
	key := transportKey{network: n, extraPEM: extraPEM, insecure: insecure}
	transports.mu.Lock()
	defer transports.mu.Unlock()
	if t, ok := transports.kept.Get(key); ok {
		return t.(*http.Transport), nil
	}
	roots, err := n.rootsWith(extraPEM)
	if err != nil {
		return nil, err
	}
	t := bounded()
	//nolint:gosec // the object asked for it, or kapp-controller-config's dangerousSkipTLSVerify names this host
	t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: roots, InsecureSkipVerify: insecure}
	if n != nil {
		t.Proxy = func(r *http.Request) (*url.URL, error) { return n.proxy(r.URL) }
	}
	transports.kept.Add(key, t)
	return t, nil
}

// Git over http(s) bounds its connections the same way: go-git's client
// for http and https is replaced by one whose transport opens at most
// MaxConnsPerServer connections to a server and which keeps one transport
// per setting (a CA bundle, a proxy, a skip of verification), at most
// MaxTransports of them, instead of a new one, with its own connections,
// for each fetch that has a setting. go-git's clients are process-wide
// (its fetch takes no client of its own), so the first git fetch installs
// it, not the import of this package; the adapter's fetches are its only
// git.
var installGitClient = sync.OnceFunc(func() {
	c := githttp.NewClientWithOptions(&http.Client{Transport: bounded()}, &githttp.ClientOptions{CacheMaxEntries: MaxTransports})
	client.InstallProtocol("http", c)
	client.InstallProtocol("https", c)
})

// bounded is a transport as go-containerregistry makes one, that opens at
// most MaxConnsPerServer connections to a server and keeps them.
func bounded() *http.Transport {
	t := remote.DefaultTransport.(*http.Transport).Clone()
	t.MaxConnsPerHost, t.MaxIdleConnsPerHost = MaxConnsPerServer, MaxConnsPerServer
	return t
}
