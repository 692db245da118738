package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rukpak-kapp/rukpak-kapp/test/tarball"
)

func TestFetchHTTP(t *testing.T) {
	t.Parallel()
	bundle := tarball.Of(t, map[string]string{"manifests/cm.yaml": "kind: ConfigMap"})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "user" || p != "pass" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/b.tgz":
			_, _ = w.Write(bundle)
		case "/LICENSE":
			_, _ = w.Write([]byte("Apache License"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	auth := HTTPOptions{Username: "user", Password: "pass", InsecureSkipVerify: true}
	tests := []struct {
		name, path string
		opts       HTTPOptions
		wantFile   string
		wantErr    string
	}{
		{name: "archive", path: "/b.tgz", opts: auth, wantFile: "manifests/cm.yaml"},
		{name: "not found", path: "/x.tgz", opts: auth, wantErr: `unexpected status "404 Not Found"`},
		{name: "no auth", path: "/b.tgz", opts: HTTPOptions{InsecureSkipVerify: true}, wantErr: `unexpected status "401 Unauthorized"`},
		{name: "not an archive", path: "/LICENSE", opts: auth, wantErr: "gzip: invalid header"},
		{name: "untrusted certificate", path: "/b.tgz", opts: HTTPOptions{Username: "user", Password: "pass"}, wantErr: "certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files, err := FetchHTTP(context.Background(), srv.URL+tt.path, tt.opts, DefaultLimits)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("FetchHTTP: %v", err)
			}
			if _, ok := files[tt.wantFile]; !ok {
				t.Errorf("files = %v, want %s", files, tt.wantFile)
			}
		})
	}
}

func TestFetchHTTP_CapsTheDownload(t *testing.T) {
	t.Parallel()
	big := tarball.Of(t, map[string]string{"a": strings.Repeat("x", 4096)})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(big) }))
	t.Cleanup(srv.Close)
	_, err := FetchHTTP(context.Background(), srv.URL, HTTPOptions{}, Limits{MaxFileBytes: 1024, MaxTotalBytes: 1 << 20, MaxFiles: 10})
	if err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Fatalf("error = %v, want a size limit error", err)
	}
}
