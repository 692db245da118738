package contenturl

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
)

// reviewer knows two tokens: "reader" may get /bundles/* (rukpak's
// bundle-reader), "viewer" may get the path of Bundle "b" only.
type reviewer struct{ down bool }

func (r reviewer) Authenticate(_ context.Context, token string) (authenticationv1.UserInfo, bool, error) {
	if r.down {
		return authenticationv1.UserInfo{}, false, errors.New("connection refused")
	}
	switch token {
	case "reader", "viewer", "nobody":
		return authenticationv1.UserInfo{Username: token}, true, nil
	}
	return authenticationv1.UserInfo{}, false, nil
}

func (r reviewer) Authorize(_ context.Context, user authenticationv1.UserInfo, path string) (bool, string, error) {
	switch {
	case user.Username == "reader" && strings.HasPrefix(path, "/bundles/"):
		return true, "", nil
	case user.Username == "viewer" && path == "/bundles/b.tgz":
		return true, "", nil
	}
	return false, "no RBAC policy matched", nil
}

// source serves Bundle "b" and BundleDeployment "d"; "pending" exists
// without content.
type source struct {
	fills  atomic.Int32
	broken bool
}

func (s *source) Lookup(_ context.Context, kind Kind, name string) (Served, error) {
	if name == "pending" || (kind == KindBundle && name != "b") || (kind == KindBundleDeployment && name != "d") {
		return Served{}, ErrNoContent
	}
	return Served{Key: key("uid-"+name, "v1"), Fill: func(context.Context) (map[string][]byte, error) {
		s.fills.Add(1)
		if s.broken {
			return nil, errors.New(`GET https://user:secret@files.example/b.tgz: unexpected status "404 Not Found"`)
		}
		return map[string][]byte{"manifests/" + name + ".yaml": []byte("kind: ConfigMap\n")}, nil
	}}, nil
}

func serve(t *testing.T, h http.Handler, method, path, token string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func TestHandler(t *testing.T) {
	store, _ := newStore(t, 1<<20)
	src := &source{}
	h := NewHandler(store, reviewer{}, src, logr.Discard())
	for _, tc := range []struct {
		name, method, path, token string
		code                      int
		body                      string
	}{
		{"no token", "GET", "/bundles/b.tgz", "", 401, "send a bearer token"},
		{"a token the API server refuses", "GET", "/bundles/b.tgz", "forged", 401, "does not accept this token"},
		{"no permission", "GET", "/bundles/b.tgz", "nobody", 403, "nobody may not get /bundles/b.tgz"},
		{"no permission for a Bundle that does not exist", "GET", "/bundles/missing.tgz", "nobody", 403, "may not get"},
		{"another Bundle's path", "GET", "/bundles/bundledeployments/d.tgz", "viewer", 403, "may not get"},
		{"bundle-reader", "GET", "/bundles/b.tgz", "reader", 200, ""},
		{"a rule naming the Bundle's path", "GET", "/bundles/b.tgz", "viewer", 200, ""},
		{"a BundleDeployment's", "GET", "/bundles/bundledeployments/d.tgz", "reader", 200, ""},
		{"HEAD", "HEAD", "/bundles/b.tgz", "reader", 200, ""},
		{"not unpacked", "GET", "/bundles/pending.tgz", "reader", 404, "has no unpacked content"},
		{"does not exist", "GET", "/bundles/missing.tgz", "reader", 404, "has no unpacked content"},
		{"not a content path", "GET", "/bundles/b.zip", "reader", 404, ""},
		{"a write", "PUT", "/bundles/b.tgz", "reader", 405, "only GET and HEAD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := serve(t, h, tc.method, tc.path, tc.token)
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.code || !strings.Contains(string(body), tc.body) {
				t.Fatalf("%d %q, want %d with %q", res.StatusCode, body, tc.code, tc.body)
			}
			if tc.code == 200 && res.Header.Get("Content-Type") != "application/gzip" {
				t.Fatalf("content type %q", res.Header.Get("Content-Type"))
			}
			if tc.code == 200 && tc.method == "GET" {
				if got := untar(t, strings.NewReader(string(body))); len(got) != 2 {
					t.Fatalf("entries %v", got)
				}
			}
		})
	}
	// b and d were fetched once each, then served from the store.
	if n := src.fills.Load(); n != 2 {
		t.Fatalf("%d fills", n)
	}
	if _, pinned := store.Has(key("uid-b", "v1")); pinned {
		t.Fatal("content a request fetched is pinned")
	}
}

func TestHandler_OneFillForRequestsAtOnce(t *testing.T) {
	store, _ := newStore(t, 1<<20)
	src := &source{}
	h := NewHandler(store, reviewer{}, src, logr.Discard())
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res := serve(t, h, "GET", "/bundles/b.tgz", "reader"); res.StatusCode != 200 {
				t.Errorf("status %d", res.StatusCode)
			}
		}()
	}
	wg.Wait()
	if n := src.fills.Load(); n != 1 {
		t.Fatalf("%d fills for one content", n)
	}
}

func TestHandler_Failures(t *testing.T) {
	store, _ := newStore(t, 1<<20)
	res := serve(t, NewHandler(store, reviewer{down: true}, &source{}, logr.Discard()), "GET", "/bundles/b.tgz", "reader")
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 503 || !strings.Contains(string(body), "could not review the token") {
		t.Fatalf("API server down: %d %s", res.StatusCode, body)
	}
	res = serve(t, NewHandler(store, reviewer{}, &source{broken: true}, logr.Discard()), "GET", "/bundles/b.tgz", "reader")
	body, _ = io.ReadAll(res.Body)
	if res.StatusCode != 503 || !strings.Contains(string(body), `unexpected status "404 Not Found"`) || strings.Contains(string(body), "secret") {
		t.Fatalf("source gone: %d %s", res.StatusCode, body)
	}
}
