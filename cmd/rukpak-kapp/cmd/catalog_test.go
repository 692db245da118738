package cmd

import (
	"bytes"
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/ocibundle"
)

// catalog render --images-lock prints the lock a push writes: every image
// the catalog relates to a bundle, by digest, named by its reference; an
// image that cannot be resolved (a tag on a registry that cannot be
// reached) is said on stderr and left out. With --operator-images=false
// only the bundles are locked.
func TestCatalogRender_ImagesLock(t *testing.T) {
	t.Parallel()
	const (
		bundle   = "registry.invalid/demo-bundle@sha256:1111111111111111111111111111111111111111111111111111111111111111"
		operator = "registry.invalid/demo@sha256:2222222222222222222222222222222222222222222222222222222222222222"
		tagged   = "unreachable.invalid/operand:v1"
	)
	dir := catalogDir(t, demoCatalog(bundle, declcfg.RelatedImage{Image: bundle}, declcfg.RelatedImage{Name: "manager", Image: operator}, declcfg.RelatedImage{Name: "operand", Image: tagged}))
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{args: nil, want: []string{bundle, operator}},
		{args: []string{"--operator-images=false"}, want: []string{bundle}},
	} {
		var out, errOut bytes.Buffer
		if code := Execute(append([]string{"catalog", "render", "--catalog", dir, "--images-lock"}, tc.args...), &out, &errOut); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		locked, err := ocibundle.ReadImagesLock(out.Bytes())
		if err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		var got []string
		for _, l := range locked {
			if l.Image != l.ID {
				t.Errorf("%s locked as %s", l.ID, l.Image)
			}
			got = append(got, l.Image)
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%v: locked %v, want %v", tc.args, got, tc.want)
		}
		if len(tc.args) == 0 && !strings.Contains(errOut.String(), "not locked: "+tagged) {
			t.Errorf("stderr does not say %s was left out: %s", tagged, errOut.String())
		}
	}
}

// catalogDir writes cfg as a file-based catalog and returns its directory.
func catalogDir(t *testing.T, cfg declcfg.DeclarativeConfig) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := declcfg.WriteYAML(cfg, f); err != nil {
		t.Fatal(err)
	}
	return dir
}

// demoCatalog is a catalog of one package, demo, with one channel, stable,
// of one bundle, demo.v1.0.0 of image bundle.
func demoCatalog(bundle string, related ...declcfg.RelatedImage) declcfg.DeclarativeConfig {
	return declcfg.DeclarativeConfig{
		Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: "demo", DefaultChannel: "stable"}},
		Channels: []declcfg.Channel{{Schema: declcfg.SchemaChannel, Package: "demo", Name: "stable", Entries: []declcfg.ChannelEntry{{Name: "demo.v1.0.0"}}}},
		Bundles: []declcfg.Bundle{{Schema: declcfg.SchemaBundle, Package: "demo", Name: "demo.v1.0.0", Image: bundle,
			Properties: []property.Property{property.MustBuildPackage("demo", "1.0.0")}, RelatedImages: related}},
	}
}

// catalog push refuses a repository whose images lock would lack an image,
// naming it, and pushes nothing; --allow-unlocked pushes it, still saying
// what is not locked.
func TestCatalogPush_IncompleteLock(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	const (
		bundle = "registry.invalid/demo-bundle@sha256:1111111111111111111111111111111111111111111111111111111111111111"
		tagged = "unreachable.invalid/operand:v1"
	)
	dir := catalogDir(t, demoCatalog(bundle, declcfg.RelatedImage{Image: bundle}, declcfg.RelatedImage{Name: "operand", Image: tagged}))
	push := func(extra ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Execute(append([]string{"catalog", "push", "--catalog", dir, "--repository", host + "/operators"}, extra...), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, out, errOut := push()
	if code != 1 || out != "" || !strings.Contains(errOut, "would lack 1 images or bundles") || !strings.Contains(errOut, "not locked: "+tagged) ||
		!strings.Contains(errOut, "--allow-unlocked") {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	if _, err := fetch.ResolveImage(context.Background(), host+"/operators:latest", fetch.ImageOptions{}); err == nil {
		t.Error("a refused push pushed the repository")
	}
	code, out, errOut = push("--allow-unlocked")
	if code != 0 || !strings.HasPrefix(out, host+"/operators@sha256:") || !strings.Contains(errOut, "not locked: "+tagged) {
		t.Fatalf("with --allow-unlocked: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
}
