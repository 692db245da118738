package harness

import (
	"fmt"
	"net"
	"net/http"
	"sync"
)

// FileServer serves files that tests put on it, over plain HTTP on
// loopback, optionally behind basic auth.
type FileServer struct {
	Host               string
	Username, Password string
	mu                 sync.Mutex
	files              map[string][]byte
	hits               map[string]int
	server             *http.Server
	scheme             string
	// Traffic is what the server received.
	Traffic *Traffic
}

// StartFileServer serves on a free loopback port; with a username every
// request needs basic auth, with a CA it serves HTTPS with a certificate
// from that CA.
func StartFileServer(username, password string, ca *TestCA) (*FileServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for file server: %w", err)
	}
	fs := &FileServer{Host: l.Addr().String(), Username: username, Password: password, files: map[string][]byte{}, hits: map[string]int{}}
	fs.server = &http.Server{Handler: http.HandlerFunc(fs.serve)}
	fs.Traffic = newTraffic()
	fs.Traffic.watch(fs.server)
	fs.scheme, err = serve(fs.server, l, ca)
	return fs, err
}

func (fs *FileServer) serve(w http.ResponseWriter, r *http.Request) {
	if fs.Username != "" {
		if u, p, ok := r.BasicAuth(); !ok || u != fs.Username || p != fs.Password {
			w.Header().Set("WWW-Authenticate", `Basic realm="rukpak-kapp-test"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
	}
	fs.mu.Lock()
	data, ok := fs.files[r.URL.Path]
	fs.hits[r.URL.Path]++
	fs.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(data)
}

// Hits counts the requests for path, answered or not.
func (fs *FileServer) Hits(path string) int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.hits[path]
}

// Put serves data at path (starting with "/") and returns its URL.
func (fs *FileServer) Put(path string, data []byte) string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.files[path] = data
	return fs.URL(path)
}

// URL of path on this server, whether or not something is there.
func (fs *FileServer) URL(path string) string { return fs.scheme + "://" + fs.Host + path }

// Stop closes the server.
func (fs *FileServer) Stop() { _ = fs.server.Close() }

// serve runs server on l in the background, over TLS with a certificate from
// ca when ca is set, and returns the URL scheme.
func serve(server *http.Server, l net.Listener, ca *TestCA) (string, error) {
	if ca == nil {
		go func() { _ = server.Serve(l) }()
		return "http", nil
	}
	cfg, err := ca.ServerConfig()
	if err != nil {
		return "", err
	}
	server.TLSConfig = cfg
	go func() { _ = server.ServeTLS(l, "", "") }()
	return "https", nil
}
