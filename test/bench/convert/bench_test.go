// Package convertbench converts the registry+v1 corpus with rukpak-kapp's
// converter and with rukpak v0.24.0's, side by side, on the same inputs in
// the same run. It is its own module so rukpak never becomes a dependency
// of the product.
package convertbench

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	rukpakconvert "github.com/operator-framework/rukpak/pkg/convert"

	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

type bundle struct {
	name  string
	files map[string][]byte
}

// corpus loads every bundle both converters accept with the same request:
// all namespaces, the only mode rukpak v0.24.0's provisioner used.
func corpus(b *testing.B) []bundle {
	b.Helper()
	dirs, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "registry-v1-corpus", "*", "*"))
	var out []bundle
	for _, d := range dirs {
		if info, err := os.Stat(d); err != nil || !info.IsDir() {
			continue
		}
		files, err := convert.ReadDir(os.DirFS(d))
		if err != nil {
			b.Fatal(err)
		}
		bd := bundle{name: filepath.Base(filepath.Dir(d)), files: files}
		if _, err := convert.Objects(files, convert.Options{InstallNamespace: "bench", WatchNamespaces: []string{""}}); err != nil {
			continue
		}
		if _, err := rukpakconvert.RegistryV1ToPlain(mapFS(files), "bench", []string{""}); err != nil {
			continue
		}
		out = append(out, bd)
	}
	if len(out) == 0 {
		b.Fatal("no bundle converts with both converters")
	}
	b.Logf("%d bundles convert with both", len(out))
	return out
}

func mapFS(files map[string][]byte) fstest.MapFS {
	m := fstest.MapFS{}
	for p, data := range files {
		if len(p) > 0 && p[len(p)-1] == '/' {
			m[p[:len(p)-1]] = &fstest.MapFile{Mode: os.ModeDir | 0o755}
			continue
		}
		m[p] = &fstest.MapFile{Data: data, Mode: 0o644}
	}
	return m
}

func BenchmarkCorpus(b *testing.B) {
	bundles := corpus(b)
	b.Run("rukpak-kapp", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, bd := range bundles {
				if _, err := convert.YAML(bd.files, convert.Options{InstallNamespace: "bench", WatchNamespaces: []string{""}}); err != nil {
					b.Fatal(bd.name, err)
				}
			}
		}
	})
	b.Run("rukpak-v0.24.0", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, bd := range bundles {
				if _, err := rukpakconvert.RegistryV1ToPlain(mapFS(bd.files), "bench", []string{""}); err != nil {
					b.Fatal(bd.name, err)
				}
			}
		}
	})
}
