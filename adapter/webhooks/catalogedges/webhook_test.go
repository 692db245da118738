package catalogedges

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
)

func entry(bundle, version, replaces string) catalog.Entry {
	return catalog.Entry{Package: "p", Channel: "beta", Bundle: bundle, Version: version, Replaces: replaces, RefName: "beta.p.example.com"}
}

// object is a BundleDeployment (or Package) made for e, as its metadata.
func object(e catalog.Entry, extra map[string]string) metav1.ObjectMeta {
	ann := e.Annotations()
	for k, v := range extra {
		ann[k] = v
	}
	return metav1.ObjectMeta{Name: "prom.ops", Labels: map[string]string{catalog.LabelPackage: e.Package}, Annotations: ann}
}

func review(t *testing.T, old, new metav1.ObjectMeta, images ...map[string]any) admission.Request {
	t.Helper()
	specs := append(images, nil, nil)
	n := 0
	raw := func(m metav1.ObjectMeta) []byte {
		obj := map[string]any{"apiVersion": "core.rukpak.io/v1alpha2", "kind": "BundleDeployment", "metadata": m}
		if spec := specs[n]; spec != nil {
			obj["spec"] = spec
		}
		n++
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Update,
		OldObject: runtime.RawExtension{Raw: raw(old)}, Object: runtime.RawExtension{Raw: raw(new)}}}
}

func TestHandle(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := datav1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	published := []client.Object{}
	for _, e := range []catalog.Entry{entry("p.1.0.0", "1.0.0", ""), entry("p.1.0.1", "1.0.1", "p.1.0.0"), entry("p.1.2.0", "1.2.0", "p.1.0.1"), entry("p.2.0.0", "2.0.0", "p.1.2.0"),
		entry("p.1.0.2", "1.0.2", "p.1.0.1")} {
		m := object(e, map[string]string{catalog.AnnotationImage: "registry.example/p@sha256:" + e.Version})
		m.Name, m.Namespace = e.RefName+"."+e.Version, "ops"
		if e.Version == "1.0.2" {
			// Kept for an install that has it; the catalog dropped it.
			m.Annotations[catalog.AnnotationRetracted] = "sha256:new"
		}
		published = append(published, &datav1alpha1.Package{ObjectMeta: m, Spec: datav1alpha1.PackageSpec{RefName: e.RefName, Version: e.Version}})
	}
	b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(published...)
	for name, fn := range packagingapi.Indexes() {
		b = b.WithIndex(packagingapi.CatalogPackage(), name, fn)
	}
	reader := b.Build()
	where := map[string]string{catalog.AnnotationPackagesNS: "ops", catalog.AnnotationInstall: "prom"}
	tests := []struct {
		name     string
		old, new metav1.ObjectMeta
		// specs of the old and the new object (none when empty).
		specs []map[string]any
		// refused: words the refusal holds; empty when allowed.
		refused []string
		// reader reads the Packages instead of the published ones.
		reader client.Reader
	}{
		{name: "the image moved by hand, the entry kept", old: object(entry("p.1.0.0", "1.0.0", ""), where), new: object(entry("p.1.0.0", "1.0.0", ""), where),
			specs:   []map[string]any{v1alpha2Image("registry.example/p:1.0.0"), v1alpha2Image("registry.example/p:9.9.9")},
			refused: []string{"installs bundle p.1.0.0 of catalog package p, whose image is registry.example/p:1.0.0", "kctrl package installed update --version"}},
		{name: "the image moved by hand through the first API", old: object(entry("p.1.0.0", "1.0.0", ""), where), new: object(entry("p.1.0.0", "1.0.0", ""), where),
			specs:   []map[string]any{v1alpha1Image("registry.example/p:1.0.0"), v1alpha1Image("registry.example/p:9.9.9")},
			refused: []string{"its image changes only with a move along the channel"}},
		{name: "nothing of the bundle changed", old: object(entry("p.1.0.0", "1.0.0", ""), where), new: object(entry("p.1.0.0", "1.0.0", ""), where),
			specs: []map[string]any{v1alpha2Image("registry.example/p:1.0.0"), v1alpha2Image("registry.example/p:1.0.0")}},
		{name: "not from a catalog", old: metav1.ObjectMeta{Name: "x"}, new: object(entry("p.2.0.0", "2.0.0", "p.1.2.0"), nil)},
		{name: "an edge", old: object(entry("p.1.0.0", "1.0.0", ""), where), new: object(entry("p.1.0.1", "1.0.1", "p.1.0.0"), where)},
		{name: "an edge to a version the catalog retracted", old: object(entry("p.1.0.1", "1.0.1", "p.1.0.0"), where), new: object(entry("p.1.0.2", "1.0.2", "p.1.0.1"), where),
			refused: []string{"version 1.0.2 of p was retracted from channel beta (the catalog's revision sha256:new no longer holds bundle p.1.0.2)", "kctrl package available get -p beta.p.example.com -n ops"}},
		{name: "three edges: a path the adapter walks", old: object(entry("p.1.0.0", "1.0.0", ""), where), new: object(entry("p.2.0.0", "2.0.0", "p.1.2.0"), where)},
		{name: "no path (a downgrade)", old: object(entry("p.2.0.0", "2.0.0", "p.1.2.0"), where), new: object(entry("p.1.0.1", "1.0.1", "p.1.0.0"), where),
			refused: []string{"version 2.0.0 is installed and 1.0.1 was asked for", "does not reach from 2.0.0, in one edge or along a path", "no version published in this channel reaches it"}},
		{name: "an edge with the entry's image", old: object(entry("p.1.0.0", "1.0.0", ""), where), new: object(entry("p.1.0.1", "1.0.1", "p.1.0.0"), where),
			specs: []map[string]any{v1alpha2Image("registry.example/p@sha256:1.0.0"), v1alpha2Image("registry.example/p@sha256:1.0.1")}},
		{name: "an edge with the entry's image relocated (same digest)", old: object(entry("p.1.0.0", "1.0.0", ""), where), new: object(entry("p.1.0.1", "1.0.1", "p.1.0.0"), where),
			specs: []map[string]any{v1alpha2Image("mirror.example/p@sha256:1.0.0"), v1alpha2Image("mirror.example/p@sha256:1.0.1")}},
		{name: "an edge with another image, by hand", old: object(entry("p.1.0.0", "1.0.0", ""), where), new: object(entry("p.1.0.1", "1.0.1", "p.1.0.0"), where),
			specs:   []map[string]any{v1alpha2Image("registry.example/p@sha256:1.0.0"), v1alpha2Image("evil.example/p:latest")},
			refused: []string{"asks for bundle p.1.0.1 of catalog package p with image evil.example/p:latest, but the catalog's Package of that bundle installs registry.example/p@sha256:1.0.1"}},
		{name: "off the edges, self-certified", old: object(entry("p.1.0.1", "1.0.1", "p.1.0.0"), where),
			new: object(entry("p.2.0.0", "2.0.0", "p.1.2.0"), map[string]string{catalog.AnnotationUpgradeEdge: catalog.PolicySelfCertified})},
		// The reconciler holds what no approval covers; the update's values
		// land on the version installed.
		{name: "held for approval: three edges, nothing approved, admitted", old: object(entry("p.1.0.0", "1.0.0", ""), where),
			new: object(entry("p.2.0.0", "2.0.0", "p.1.2.0"), merged(where, map[string]string{catalog.AnnotationUpgradeApproval: catalog.ApprovalManual}))},
		{name: "held for approval: another version approved, admitted", old: object(entry("p.1.0.0", "1.0.0", ""), where),
			new: object(entry("p.1.0.1", "1.0.1", "p.1.0.0"), merged(where, map[string]string{catalog.AnnotationUpgradeApproval: catalog.ApprovalManual,
				catalog.AnnotationApprovedVersion: "2.0.0"}))},
		{name: "approved: exactly the version asked for", old: object(entry("p.1.0.0", "1.0.0", ""), where),
			new: object(entry("p.2.0.0", "2.0.0", "p.1.2.0"), merged(where, map[string]string{catalog.AnnotationUpgradeApproval: catalog.ApprovalManual,
				catalog.AnnotationApprovedVersion: "2.0.0"}))},
		{name: "held for approval, but no path: the path's refusal", old: object(entry("p.2.0.0", "2.0.0", "p.1.2.0"), where),
			new:     object(entry("p.1.0.1", "1.0.1", "p.1.0.0"), merged(where, map[string]string{catalog.AnnotationUpgradeApproval: catalog.ApprovalManual})),
			refused: []string{"does not reach from 2.0.0"}},
		{name: "the Packages not readable", old: object(entry("p.1.0.1", "1.0.1", "p.1.0.0"), nil), new: object(entry("p.2.0.0", "2.0.0", "p.1.2.0"), nil),
			refused: []string{"the versions that reach it could not be read"}},
		{name: "the namespace annotation removed alongside an image moved by hand", old: object(entry("p.1.0.0", "1.0.0", ""), where), new: object(entry("p.1.0.1", "1.0.1", "p.1.0.0"), nil),
			specs:   []map[string]any{v1alpha2Image("registry.example/p@sha256:1.0.0"), v1alpha2Image("evil.example/p:latest")},
			refused: []string{"with image evil.example/p:latest, but the catalog's Package of that bundle installs registry.example/p@sha256:1.0.1"}},
		{name: "the packaging API down: a move is not judged unread", old: object(entry("p.1.0.0", "1.0.0", ""), where), new: object(entry("p.1.0.1", "1.0.1", "p.1.0.0"), where),
			specs:   []map[string]any{v1alpha2Image("registry.example/p@sha256:1.0.0"), v1alpha2Image("evil.example/p:latest")},
			reader:  failing{reader},
			refused: []string{"could not be read to judge the move", "kapp-controller's packaging API (APIService v1alpha1.data.packaging.carvel.dev) is not available", "try again"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &handler{channels: packagingapi.NewPackages(reader, reader, "")}
			if tt.reader != nil {
				h.channels = packagingapi.NewPackages(tt.reader, tt.reader, "")
			}
			resp := h.Handle(context.Background(), review(t, tt.old, tt.new, tt.specs...))
			if len(tt.refused) == 0 {
				if !resp.Allowed {
					t.Fatalf("refused: %s", resp.Result.Message)
				}
				return
			}
			if resp.Allowed {
				t.Fatal("allowed")
			}
			for _, w := range tt.refused {
				if !strings.Contains(resp.Result.Message, w) {
					t.Errorf("%q lacks %q", resp.Result.Message, w)
				}
			}
		})
	}
}

func v1alpha2Image(ref string) map[string]any {
	return map[string]any{"source": map[string]any{"type": "image", "image": map[string]any{"ref": ref}}}
}

func v1alpha1Image(ref string) map[string]any {
	return map[string]any{"template": map[string]any{"spec": map[string]any{"source": map[string]any{"type": "image", "image": map[string]any{"ref": ref}}}}}
}

// failing answers every list as kube-apiserver does while kapp-controller's
// aggregated API is down.
type failing struct{ client.Reader }

func (failing) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
}

// merged is a and b in one map (b wins).
func merged(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
