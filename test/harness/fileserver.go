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
	server             *http.Server
}

// StartFileServer serves on a free loopback port; with a username every
// request needs basic auth.
func StartFileServer(username, password string) (*FileServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for file server: %w", err)
	}
	fs := &FileServer{Host: l.Addr().String(), Username: username, Password: password, files: map[string][]byte{}}
	fs.server = &http.Server{Handler: http.HandlerFunc(fs.serve)}
	go func() { _ = fs.server.Serve(l) }()
	return fs, nil
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
	fs.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(data)
}

// Put serves data at path (starting with "/") and returns its URL.
func (fs *FileServer) Put(path string, data []byte) string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.files[path] = data
	return fs.URL(path)
}

// URL of path on this server, whether or not something is there.
func (fs *FileServer) URL(path string) string { return "http://" + fs.Host + path }

// Stop closes the server.
func (fs *FileServer) Stop() { _ = fs.server.Close() }
