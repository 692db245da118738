package contenturl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/singleflight"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
)

// ErrNoContent says an object has no content to serve now: it does not
// exist, or it is not unpacked.
var ErrNoContent = errors.New("no content")

// Served is what an object's contentURL serves: the key of its content and
// how to fetch it again.
type Served struct {
	Key Key
	// Fill fetches the content again (from the pinned source), for a
	// replica that does not hold it: the files as served.
	Fill func(ctx context.Context) (map[string][]byte, error)
}

// Source finds what the object kind/name serves now; ErrNoContent when
// nothing.
type Source interface {
	Lookup(ctx context.Context, kind Kind, name string) (Served, error)
}

// FillTimeout bounds a fetch made for a request.
const FillTimeout = 2 * time.Minute

// Handler serves content at the paths Path makes.
type Handler struct {
	store    *Tarballs
	reviewer Reviewer
	source   Source
	log      logr.Logger
	fills    singleflight.Group
	// slots bounds the fetches requests run at once.
	slots chan struct{}
}

// NewHandler serves what source names from store, to the users reviewer
// allows.
func NewHandler(store *Tarballs, reviewer Reviewer, source Source, log logr.Logger) *Handler {
	return &Handler{store: store, reviewer: reviewer, source: source, log: log, slots: make(chan struct{}, 2)}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "only GET and HEAD are served here", http.StatusMethodNotAllowed)
		return
	}
	kind, name, ok := Parse(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	token, ok := bearer(r)
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="rukpak-kapp"`)
		http.Error(w, "Unauthorized: send a bearer token of an account that may get "+r.URL.Path, http.StatusUnauthorized)
		return
	}
	ctx := r.Context()
	user, ok, err := h.reviewer.Authenticate(ctx, token)
	if err != nil {
		h.fail(w, "the API server could not review the token; try again", err)
		return
	}
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="rukpak-kapp"`)
		http.Error(w, "Unauthorized: the API server does not accept this token", http.StatusUnauthorized)
		return
	}
	allowed, reason, err := h.reviewer.Authorize(ctx, user, r.URL.Path)
	if err != nil {
		h.fail(w, "the API server could not review the access; try again", err)
		return
	}
	if !allowed {
		msg := fmt.Sprintf("Forbidden: %s may not get %s (bind the bundle-reader ClusterRole, or allow get on the %s)", user.Username, r.URL.Path, kind)
		if reason != "" {
			msg += ": " + reason
		}
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	c, err := h.source.Lookup(ctx, kind, name)
	if errors.Is(err, ErrNoContent) {
		http.Error(w, fmt.Sprintf("the %s %s has no unpacked content to serve", kind, name), http.StatusNotFound)
		return
	}
	if err != nil {
		h.fail(w, fmt.Sprintf("the %s %s could not be read; try again", kind, name), err)
		return
	}
	f, info, err := h.store.Open(c.Key)
	if errors.Is(err, ErrNotStored) {
		f, info, err = h.fill(ctx, c)
	}
	if err != nil {
		h.fail(w, fmt.Sprintf("the content of the %s %s could not be fetched again from its pinned source; try again", kind, name), err)
		return
	}
	defer func() { _ = f.Close() }()
	w.Header().Set("Content-Type", "application/gzip")
	http.ServeContent(w, r, name+suffix, info.Made, f)
}

// fill fetches c again, once however many requests ask at the same time.
func (h *Handler) fill(ctx context.Context, c Served) (*os.File, Info, error) {
	_, err, _ := h.fills.Do(string(c.Key.UID)+"/"+c.Key.Version, func() (any, error) {
		if stored, _ := h.store.Has(c.Key); stored {
			return nil, nil
		}
		select {
		case h.slots <- struct{}{}:
			defer func() { <-h.slots }()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		// The fetch outlives a request that gives up: the next one finds it.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), FillTimeout)
		defer cancel()
		files, err := c.Fill(fctx)
		if err != nil {
			return nil, err
		}
		_, err = h.store.Put(c.Key, files, false)
		return nil, err
	})
	if err != nil {
		return nil, Info{}, err
	}
	return h.store.Open(c.Key)
}

func (h *Handler) fail(w http.ResponseWriter, msg string, err error) {
	h.log.Error(err, msg)
	// The cause, as a condition would say it: no credentials, bounded.
	http.Error(w, msg+": "+status.Message(err.Error()), http.StatusServiceUnavailable)
}

func bearer(r *http.Request) (string, bool) {
	v := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", false
	}
	return strings.TrimSpace(token), true
}
