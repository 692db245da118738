package fetch

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

const (
	pkgA = "schema: olm.package\nname: a\ndefaultChannel: s\n---\nschema: olm.channel\nname: s\npackage: a\nentries:\n- name: a.1\n---\n" +
		"schema: olm.bundle\nname: a.1\npackage: a\nimage: example.com/a:1\nproperties:\n- type: olm.package\n  value: {packageName: a, version: 1.0.0}\n"
	pkgB = `{"schema":"olm.package","name":"b","defaultChannel":"s"}
{"schema":"olm.channel","name":"s","package":"b","entries":[{"name":"b.1"}]}
{"schema":"olm.bundle","name":"b.1","package":"b","image":"example.com/b:1","properties":[{"type":"olm.package","value":{"packageName":"b","version":"1.0.0"}}]}
`
)

// layer is a tar layer of files (name → content; content "" with a name
// ending in / is a directory).
func layer(t *testing.T, files ...[2]string) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f[0], Mode: 0o644, Size: int64(len(f[1])), Typeflag: tar.TypeReg}
		if strings.HasSuffix(f[0], "/") {
			h = &tar.Header{Name: f[0], Mode: 0o755, Typeflag: tar.TypeDir}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func catalogImage(t *testing.T, reg *harness.Registry, tag, label string, layers ...v1.Layer) string {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	if label != "" {
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		cfg = cfg.DeepCopy()
		cfg.Config.Labels = map[string]string{CatalogConfigsLabel: label}
		if img, err = mutate.ConfigFile(img, cfg); err != nil {
			t.Fatal(err)
		}
	}
	ref, _, err := reg.PushImage(img, "catalog:"+tag)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// A catalog image as opm builds it (a large base layer, the catalog on
// top, later layers changing it) is read as the container would see it:
// from the directory its label names, a later layer's file and whiteouts
// winning, .indexignore honoured; each package read back on its own.
func TestSpoolCatalogImage(t *testing.T) {
	reg, err := harness.StartRegistry("", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Stop)
	noise := make([]byte, 4<<20)
	if _, err := rand.Read(noise); err != nil {
		t.Fatal(err)
	}
	base := layer(t, [2]string{"bin/opm", string(noise)}, [2]string{"configs/stale/catalog.yaml", "not a catalog"})
	catalogLayer := layer(t, [2]string{"catalog-data/a/catalog.yaml", pkgA}, [2]string{"catalog-data/b/catalog.json", strings.Replace(pkgB, "b.1", "b.0", -1)},
		[2]string{"catalog-data/gone/catalog.yaml", "schema: olm.package\nname: gone\n"},
		[2]string{"catalog-data/.indexignore", "notes.txt\n"}, [2]string{"catalog-data/notes.txt", "not a catalog either"})
	update := layer(t, [2]string{"catalog-data/b/catalog.json", pkgB}, [2]string{"catalog-data/gone/.wh.catalog.yaml", ""})
	ref := catalogImage(t, reg, "layered", "/catalog-data", base, catalogLayer, update)

	spool, err := SpoolCatalogImage(context.Background(), ref, ImageOptions{}, InClusterCatalogLimits, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer spool.Close()
	if got := spool.Packages(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("packages = %v, want a and b (gone whited out, notes ignored, /configs not the labelled directory)", got)
	}
	if !strings.Contains(spool.Pinned, "@sha256:") {
		t.Errorf("pinned = %q", spool.Pinned)
	}
	b, err := spool.Package("b")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Packages) != 1 || len(b.Channels) != 1 || len(b.Bundles) != 1 || b.Bundles[0].Name != "b.1" {
		t.Errorf("package b = %+v, want the upper layer's b.1", b)
	}
	a, err := spool.Package("a")
	if err != nil || len(a.Bundles) != 1 || a.Bundles[0].Image != "example.com/a:1" {
		t.Errorf("package a = %+v, %v", a, err)
	}
	name := spool.file.Name()
	if err := spool.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(name); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Close left the spool: %v", err)
	}
	// One a stopped process left is removed at the next start.
	dir := t.TempDir()
	left, err := SpoolCatalogImage(context.Background(), ref, ImageOptions{}, InClusterCatalogLimits, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := RemoveCatalogSpools(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left.file.Name()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("RemoveCatalogSpools left %v", err)
	}
	left.file.Close()
}

// What cannot be read is refused as content that cannot be read (never
// pulled again for the same digest), naming the limit or the file.
func TestSpoolCatalogImageRefusals(t *testing.T) {
	reg, err := harness.StartRegistry("", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Stop)
	ref := catalogImage(t, reg, "ok", "", layer(t, [2]string{"configs/a/catalog.yaml", pkgA}))
	for _, tc := range []struct {
		name   string
		ref    string
		limits func(*Limits)
		want   string
	}{
		{"a catalog file over the file limit", ref, func(l *Limits) { l.MaxFileBytes = 64 }, `file "/configs/a/catalog.yaml" is`},
		{"catalog files over the total", ref, func(l *Limits) { l.MaxTotalBytes = 64 }, "over the limit of 64 bytes"},
		{"layers over the fetch limit", ref, func(l *Limits) { l.MaxFetchBytes = 64 }, "over the limit of 64"},
		{"no catalog where the label says", catalogImage(t, reg, "elsewhere", "/catalog", layer(t, [2]string{"configs/a/catalog.yaml", pkgA})), nil, "holds no catalog under /catalog"},
		{"a file that is no catalog", catalogImage(t, reg, "broken", "", layer(t, [2]string{"configs/a/catalog.json", "{not json"})), nil, "/configs/a/catalog.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limits := InClusterCatalogLimits
			if tc.limits != nil {
				tc.limits(&limits)
			}
			spool, err := SpoolCatalogImage(context.Background(), tc.ref, ImageOptions{}, limits, t.TempDir(), nil)
			spool.Close()
			if !errors.Is(err, ErrInvalidContent) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want invalid content saying %q", err, tc.want)
			}
		})
	}
}

// One object larger than MaxCatalogMetaBytes is refused before it is held
// whole.
func TestMetaBound(t *testing.T) {
	big := `{"schema":"olm.package","name":"a","description":"` + strings.Repeat("x", 3000) + `"}`
	b := &metaBound{r: strings.NewReader(big + "\n" + big), max: 1024}
	_, err := io.ReadAll(b)
	if !errors.Is(err, errMetaTooLarge) {
		t.Errorf("err = %v", err)
	}
}

// The harness pushes catalog images with the label the fetch reads; it
// keeps its own copy of the name (it cannot import this package).
func TestHarnessCatalogLabel(t *testing.T) {
	if harness.CatalogConfigsLabel != CatalogConfigsLabel {
		t.Errorf("harness.CatalogConfigsLabel = %q, want %q", harness.CatalogConfigsLabel, CatalogConfigsLabel)
	}
}

// Catalog spools share one bound: a catalog that does not fit alongside
// another's spool fails, saying so, until that one is closed; one over the
// bound alone is invalid content, whatever else is held.
func TestSpoolBudget(t *testing.T) {
	reg, err := harness.StartRegistry("", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Stop)
	ref := catalogImage(t, reg, "budget", "/configs", layer(t, [2]string{"configs/a/catalog.yaml", pkgA}, [2]string{"configs/b/catalog.json", pkgB}))
	one, err := SpoolCatalogImage(context.Background(), ref, ImageOptions{}, InClusterCatalogLimits, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	size := one.held
	one.Close()

	budget := NewSpoolBudget(size + size/2)
	first, err := SpoolCatalogImage(context.Background(), ref, ImageOptions{}, InClusterCatalogLimits, t.TempDir(), budget)
	if err != nil {
		t.Fatal(err)
	}
	_, err = SpoolCatalogImage(context.Background(), ref, ImageOptions{}, InClusterCatalogLimits, t.TempDir(), budget)
	if err == nil || errors.Is(err, ErrInvalidContent) || !strings.Contains(err.Error(), "do not fit alongside the other catalogs'") || !strings.Contains(err.Error(), "--catalog-spool-max-bytes") {
		t.Fatalf("a second catalog alongside the first: %v; want a failure to retry, naming the flag", err)
	}
	if budget.Used() != size {
		t.Errorf("the refused spool kept %d bytes of the budget", budget.Used()-size)
	}
	first.Close()
	second, err := SpoolCatalogImage(context.Background(), ref, ImageOptions{}, InClusterCatalogLimits, t.TempDir(), budget)
	if err != nil {
		t.Fatalf("once the first is closed: %v", err)
	}
	second.Close()
	if budget.Used() != 0 {
		t.Errorf("%d bytes held after every spool closed", budget.Used())
	}
	_, err = SpoolCatalogImage(context.Background(), ref, ImageOptions{}, InClusterCatalogLimits, t.TempDir(), NewSpoolBudget(size/2))
	if !errors.Is(err, ErrInvalidContent) || !strings.Contains(err.Error(), "over the") {
		t.Errorf("a catalog over the bound alone: %v; want invalid content", err)
	}
}
