package fetch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// A catalog image as opm lays it out is read from the directory its label
// names; one over the limits is refused as content that cannot be read,
// naming the limit, before anything of it is parsed.
func TestCatalogImage(t *testing.T) {
	reg, err := harness.StartRegistry("", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Stop)
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("catalog/p/catalog.yaml", "schema: olm.package\nname: p\ndefaultChannel: s\n---\nschema: olm.channel\nname: s\npackage: p\nentries:\n- name: p.1\n---\n"+
		"schema: olm.bundle\nname: p.1\npackage: p\nimage: example.com/p:1\nproperties:\n- type: olm.package\n  value: {packageName: p, version: 1.0.0}\n")
	write("Dockerfile", "FROM scratch\nADD catalog /catalog-data\nLABEL operators.operatorframework.io.index.configs.v1=/catalog-data\n")
	ref, _, err := reg.PushDockerContext(dir, "catalog:latest")
	if err != nil {
		t.Fatal(err)
	}

	cfg, pinned, err := CatalogImage(context.Background(), ref, ImageOptions{}, InClusterCatalogLimits)
	if err != nil || len(cfg.Packages) != 1 || len(cfg.Bundles) != 1 || !strings.Contains(pinned, "@sha256:") {
		t.Fatalf("CatalogImage = %+v, %q, %v", cfg, pinned, err)
	}
	small := InClusterCatalogLimits
	small.MaxTotalBytes = 64
	_, _, err = CatalogImage(context.Background(), ref, ImageOptions{}, small)
	if !errors.Is(err, ErrInvalidContent) || !strings.Contains(err.Error(), "over the limit of 64 bytes") {
		t.Errorf("over the limit: %v", err)
	}
}
