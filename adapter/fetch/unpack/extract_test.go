package unpack

import (
	"archive/tar"
	"bytes"
	"errors"
	"strings"
	"testing"
)

type entry struct {
	name, link string
	kind       byte
	size       int64
	data       string
}

func tarOf(t *testing.T, entries ...entry) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.kind, Mode: 0o644, Size: e.size}
		if e.kind == tar.TypeReg && e.size == 0 {
			hdr.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if e.kind == tar.TypeReg && e.data != "" {
			if _, err := tw.Write([]byte(e.data)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

func TestExtractTar(t *testing.T) {
	t.Parallel()
	small := Limits{MaxFileBytes: 16, MaxTotalBytes: 24, MaxFiles: 3}
	tests := []struct {
		name    string
		entries []entry
		want    map[string]string
		wantErr string
	}{
		{
			name:    "files and directories, rooted at /",
			entries: []entry{{name: "manifests/", kind: tar.TypeDir}, {name: "/manifests/a.yaml", kind: tar.TypeReg, data: "a: 1"}},
			want:    map[string]string{"manifests/": "", "manifests/a.yaml": "a: 1"},
		},
		{name: "path traversal", entries: []entry{{name: "../../x", kind: tar.TypeReg, data: "x"}}, wantErr: `archive entry "../../x" escapes the bundle root`},
		{name: "traversal hidden in the middle", entries: []entry{{name: "manifests/../../x", kind: tar.TypeReg, data: "x"}}, wantErr: "escapes the bundle root"},
		{name: "symlink to an absolute path", entries: []entry{{name: "manifests/a", link: "/etc/passwd", kind: tar.TypeSymlink}}, wantErr: "points outside the bundle root"},
		{name: "symlink climbing out", entries: []entry{{name: "manifests/a", link: "../../etc", kind: tar.TypeSymlink}}, wantErr: "points outside the bundle root"},
		{name: "hard link climbing out", entries: []entry{{name: "a", link: "../x", kind: tar.TypeLink}}, wantErr: "points outside the bundle root"},
		{
			name:    "symlink inside the root is not followed",
			entries: []entry{{name: "manifests/a.yaml", kind: tar.TypeReg, data: "a"}, {name: "manifests/b.yaml", link: "a.yaml", kind: tar.TypeSymlink}},
			want:    map[string]string{"manifests/a.yaml": "a"},
		},
		{name: "one file over the cap, refused before reading", entries: []entry{{name: "big", kind: tar.TypeReg, size: 2 << 30}}, wantErr: "over the limit of 16"},
		{
			name:    "total over the cap",
			entries: []entry{{name: "a", kind: tar.TypeReg, data: "0123456789abcdef"}, {name: "b", kind: tar.TypeReg, data: "0123456789abcdef"}},
			wantErr: "bundle is over the limit of 24 bytes",
		},
		{
			name:    "too many files",
			entries: []entry{{name: "a", kind: tar.TypeReg, data: "1"}, {name: "b", kind: tar.TypeReg, data: "1"}, {name: "c", kind: tar.TypeReg, data: "1"}, {name: "d", kind: tar.TypeReg, data: "1"}},
			wantErr: "more than 3 files",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got Files
			var err error
			if tt.name == "one file over the cap, refused before reading" {
				// A header claiming 2 GiB with no body: a sparse-file bomb must
				// be refused from its header alone.
				var buf bytes.Buffer
				tw := tar.NewWriter(&buf)
				_ = tw.WriteHeader(&tar.Header{Name: "big", Typeflag: tar.TypeReg, Size: 2 << 30, Mode: 0o644})
				got, err = ExtractTar(&buf, small)
			} else {
				got, err = ExtractTar(tarOf(t, tt.entries...), small)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("want error containing %q, got %v", tt.wantErr, err)
				}
				if !errors.Is(err, ErrInvalidContent) {
					t.Errorf("error %v is not ErrInvalidContent", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ExtractTar: %v", err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d entries %v, want %v", len(got), got, tt.want)
			}
			for k, v := range tt.want {
				if string(got[k]) != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}
