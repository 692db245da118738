package unpack

import (
	"archive/tar"
	"bytes"
	"strings"
	"testing"
)

// FuzzExtractTar feeds arbitrary archives to the extraction: it must never
// panic, never return a path outside the root, and stay within its limits.
func FuzzExtractTar(f *testing.F) {
	for _, entries := range [][]entry{
		{{name: "manifests/a.yaml", kind: tar.TypeReg, data: "a: 1"}},
		{{name: "../../x", kind: tar.TypeReg, data: "x"}},
		{{name: "l", link: "/etc/passwd", kind: tar.TypeSymlink}},
	} {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, e := range entries {
			_ = tw.WriteHeader(&tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.kind, Size: int64(len(e.data)), Mode: 0o644})
			_, _ = tw.Write([]byte(e.data))
		}
		_ = tw.Close()
		f.Add(buf.Bytes())
	}
	limits := Limits{MaxFileBytes: 1 << 10, MaxTotalBytes: 4 << 10, MaxFiles: 16}
	f.Fuzz(func(t *testing.T, data []byte) {
		files, err := ExtractTar(bytes.NewReader(data), limits)
		if err != nil {
			return
		}
		total := 0
		for name, content := range files {
			if strings.HasPrefix(name, "/") || name == ".." || strings.HasPrefix(name, "../") || strings.Contains(name, "/../") {
				t.Fatalf("path %q escapes the root", name)
			}
			total += len(content)
		}
		if total > int(limits.MaxTotalBytes) {
			t.Fatalf("extracted %d bytes over the limit", total)
		}
	})
}
