package catalog

import (
	"slices"
	"strings"
	"testing"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"github.com/operator-framework/operator-registry/alpha/declcfg"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
)

const (
	dOne = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	dTwo = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
)

// A Package's images are its bundle's first, then the catalog's related
// images without the bundle or a repeat.
func TestPublish_Images(t *testing.T) {
	t.Parallel()
	b := bundle("demo", "demo.v1.0.0", "1.0.0")
	b.RelatedImages = []declcfg.RelatedImage{{Image: "registry.example/operand:v1"}, {Image: b.Image}, {Name: "manager", Image: "registry.example/manager:v1"}, {Image: "registry.example/operand:v1"}}
	cfg := &declcfg.DeclarativeConfig{
		Packages: []declcfg.Package{{Schema: declcfg.SchemaPackage, Name: "demo", DefaultChannel: "stable"}},
		Channels: []declcfg.Channel{{Schema: declcfg.SchemaChannel, Package: "demo", Name: "stable", Entries: []declcfg.ChannelEntry{{Name: "demo.v1.0.0"}}}},
		Bundles:  []declcfg.Bundle{b},
	}
	pub := Publish(cfg, Options{})
	if len(pub.Packages) != 1 {
		t.Fatalf("published %d Packages, refused %v", len(pub.Packages), pub.Refused)
	}
	got := pub.Images[pub.Packages[0].Name]
	want := []string{b.Image, "registry.example/manager:v1", "registry.example/operand:v1"}
	if !slices.Equal(got, want) {
		t.Errorf("images %v, want %v", got, want)
	}
}

// A relocatable Package's App fetches its images bundle second, renders
// the first fetch with ytt, and sets the bundle image with kbld from the
// images bundle's lock; the OperatorInstall carries the lock.
func TestRelocatable(t *testing.T) {
	t.Parallel()
	in := Install{Entry: Entry{Package: "demo", Channel: "stable", Bundle: "demo.v1.0.0", Version: "1.0.0"}, Image: "registry.example/demo:v1", InstallNamespace: "demo", Class: "core-rukpak-io-registry"}
	p := &datav1alpha1.Package{Spec: datav1alpha1.PackageSpec{Template: datav1alpha1.AppTemplateSpec{Spec: AppTemplate(in)}}}
	lock := bundlefiles.ImagesLock{Bundle: in.Image, Images: map[string]string{in.Image: dOne, "registry.example/manager:v1": dTwo}}
	Relocatable(p, lock, "mirror.example/repo@"+dOne)
	spec := p.Spec.Template.Spec
	if len(spec.Fetch) != 2 || spec.Fetch[1].ImgpkgBundle == nil || spec.Fetch[1].ImgpkgBundle.Image != "mirror.example/repo@"+dOne {
		t.Fatalf("fetch %+v", spec.Fetch)
	}
	if len(spec.Template) != 2 || !slices.Equal(spec.Template[0].Ytt.Paths, []string{"0"}) || spec.Template[1].Kbld == nil ||
		!slices.Equal(spec.Template[1].Kbld.Paths, []string{"-", "1/.imgpkg/images.yml"}) {
		t.Fatalf("template %+v", spec.Template)
	}
	paths := spec.Fetch[0].Inline.Paths
	if !strings.Contains(paths[kbldConfigFile], "path: [spec, image]") {
		t.Errorf("kbld config %s", paths[kbldConfigFile])
	}
	if !strings.Contains(paths[relocateFile], bundlefiles.AnnotationImagesLock) || !strings.Contains(paths[relocateFile], dTwo) {
		t.Errorf("overlay %s", paths[relocateFile])
	}
	if p.Annotations[bundlefiles.AnnotationImagesLock] != lock.String() {
		t.Errorf("annotation %q", p.Annotations[bundlefiles.AnnotationImagesLock])
	}
	if AppTemplate(in).Fetch[0].Inline.Paths[relocateFile] != "" {
		t.Error("the catalog's own template changed")
	}
}

// A walk's step is fetched alongside the asked bundle's copy when that was
// relocated, else from where its Package names it.
func TestNode_RefFrom(t *testing.T) {
	t.Parallel()
	asked := &bundlefiles.ImagesLock{Bundle: "registry.example/demo:v2", Images: map[string]string{"registry.example/demo:v2": dTwo}}
	step := Node{Image: "registry.example/demo:v1", Lock: &bundlefiles.ImagesLock{Bundle: "registry.example/demo:v1", Images: map[string]string{"registry.example/demo:v1": dOne}}}
	for _, tc := range []struct {
		name  string
		asked *bundlefiles.ImagesLock
		step  Node
		ref   string
		want  string
	}{
		{name: "relocated", asked: asked, step: step, ref: "mirror.example/repo@" + dTwo, want: "mirror.example/repo@" + dOne},
		{name: "not relocated", asked: asked, step: step, ref: "registry.example/demo@" + dTwo, want: step.Image},
		{name: "no lock asked", step: step, ref: "mirror.example/repo@" + dTwo, want: step.Image},
		{name: "a step without a lock", asked: asked, step: Node{Image: "registry.example/demo:v1"}, ref: "mirror.example/repo@" + dTwo, want: "registry.example/demo:v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.step.RefFrom(tc.asked, tc.ref)
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
