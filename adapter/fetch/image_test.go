package fetch

import (
	"archive/tar"
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func TestCheckedLayers_RefusesWhatFlatteningWouldDrop(t *testing.T) {
	t.Parallel()
	layerOf := func(hdrs ...*tar.Header) *bytes.Buffer {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, h := range hdrs {
			_ = tw.WriteHeader(h)
			if h.Typeflag == tar.TypeReg && h.Size < 100 {
				_, _ = tw.Write(bytes.Repeat([]byte("x"), int(h.Size)))
			}
		}
		_ = tw.Flush()
		return &buf
	}
	ok := &tar.Header{Name: "manifests/a.yaml", Size: 1, Mode: 0o644, Typeflag: tar.TypeReg}
	tests := []struct {
		name    string
		hostile *tar.Header
		wantErr string
	}{
		{"clean", nil, ""},
		{"traversal", &tar.Header{Name: "manifests/../../x", Size: 1, Mode: 0o644, Typeflag: tar.TypeReg}, "escapes the bundle root"},
		{"symlink out", &tar.Header{Name: "manifests/l", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink}, "points outside the bundle root"},
		{"sparse 2 GiB", &tar.Header{Name: "manifests/huge", Size: 2 << 30, Mode: 0o644, Typeflag: tar.TypeReg}, "over the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hdrs := []*tar.Header{ok}
			if tt.hostile != nil {
				hdrs = append(hdrs, tt.hostile)
			}
			data := layerOf(hdrs...).Bytes()
			layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
			if err != nil {
				t.Fatal(err)
			}
			img, err := mutate.AppendLayers(empty.Image, layer)
			if err != nil {
				t.Fatal(err)
			}
			_, err = checkedLayers(img, DefaultLimits)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("checkedLayers: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
