package harness

import (
	"net"
	"net/http"
	"strings"
	"sync"
)

// Traffic counts what one of the harness's servers (a registry, a git or a
// file server) receives: the requests, by path, and the connections open
// now and at most, so that a suite can bound how often the adapter asks a
// server and how many connections it keeps to it (a failing fetch that
// hot-loops shows as thousands of each).
type Traffic struct {
	mu       sync.Mutex
	requests map[string]int
	open     map[net.Conn]bool
	peak     int
}

func newTraffic() *Traffic {
	return &Traffic{requests: map[string]int{}, open: map[net.Conn]bool{}}
}

// watch counts what server receives through its handler and its
// connections.
func (t *Traffic) watch(server *http.Server) {
	inner := server.Handler
	server.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.mu.Lock()
		t.requests[r.URL.Path]++
		t.mu.Unlock()
		inner.ServeHTTP(w, r)
	})
	server.ConnState = func(c net.Conn, s http.ConnState) {
		t.mu.Lock()
		defer t.mu.Unlock()
		switch s {
		case http.StateNew:
			t.open[c] = true
			t.peak = max(t.peak, len(t.open))
		case http.StateClosed, http.StateHijacked:
			delete(t.open, c)
		}
	}
}

// Requests counts the requests whose path contains part, answered or not.
func (t *Traffic) Requests(part string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for path, count := range t.requests {
		if strings.Contains(path, part) {
			n += count
		}
	}
	return n
}

// Open is how many connections are open now, from every client.
func (t *Traffic) Open() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.open)
}

// Peak is the most connections that were open at once since the server
// started or ResetPeak.
func (t *Traffic) Peak() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.peak
}

// ResetPeak starts the count of Peak again from the connections open now.
func (t *Traffic) ResetPeak() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.peak = len(t.open)
}
