package packagingapi

import (
	"context"
	"slices"
	"strings"
	"testing"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
)

const global = "kapp-controller-packaging-global"

// catalogPackage is the Package of version of package p's channel in ns,
// with its image annotated when image is set.
func catalogPackage(ns, p, channel, version, replaces string, image bool) *datav1alpha1.Package {
	e := catalog.Entry{Package: p, Channel: channel, Bundle: p + "." + version, Version: version, Replaces: replaces, RefName: channel + "." + p + ".example.com"}
	ann := e.Annotations()
	ann[catalog.AnnotationDefaultChannel] = "true"
	spec := datav1alpha1.PackageSpec{RefName: e.RefName, Version: version}
	if image {
		ann[catalog.AnnotationImage] = "registry.example/" + ns + "/" + p + ":" + version
	} else {
		spec.Template.Spec = catalog.AppTemplate(catalog.Install{Entry: e, Image: "registry.example/inline/" + p + ":" + version, InstallNamespace: p, Class: "core-rukpak-io-registry"})
	}
	return &datav1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: e.RefName + "." + version, Labels: map[string]string{catalog.LabelPackage: p}, Annotations: ann}, Spec: spec}
}

// cluster holds objs, indexed as the adapter's cache of catalog Packages;
// gets counts the reads of whole Packages.
func cluster(t testing.TB, gets *int, objs ...client.Object) (cache, direct client.Reader) {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{datav1alpha1.AddToScheme, corev1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...)
	for name, fn := range Indexes() {
		b = b.WithIndex(CatalogPackage(), name, fn)
	}
	c := b.Build()
	direct = interceptor.NewClient(c, interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if _, whole := obj.(*datav1alpha1.Package); whole {
			*gets++
			// kapp-controller's API falls back to the global namespace.
			if err := c.Get(ctx, key, obj, opts...); !apierrors.IsNotFound(err) {
				return err
			}
			return c.Get(ctx, client.ObjectKey{Namespace: global, Name: key.Name}, obj, opts...)
		}
		return c.Get(ctx, key, obj, opts...)
	}})
	return c, direct
}

func versions(entries []catalog.Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Version)
	}
	slices.Sort(out)
	return out
}

// A namespace sees its own catalog Packages and the global packaging
// namespace's, as kapp-controller's API shows them: a Package of its own
// shadows a global one of the same name; a namespace annotated to exclude
// the global ones, the global namespace itself and a namespace that does
// not exist (kapp-controller cannot read it) see only their own;
// another namespace's Packages, another channel's and another package's are
// never seen.
func TestPackagesVisibility(t *testing.T) {
	t.Parallel()
	var gets int
	shadow := catalogPackage("ops", "etcd", "stable", "1.1.0", "etcd.1.0.0", true)
	shadow.Annotations[catalog.AnnotationReplaces] = "etcd.0.9.0"
	cache, direct := cluster(t, &gets,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ops"}}, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dev"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "private", Annotations: map[string]string{AnnotationExcludeGlobal: ""}}},
		catalogPackage(global, "etcd", "stable", "1.0.0", "", true), catalogPackage(global, "etcd", "stable", "1.1.0", "etcd.1.0.0", true),
		catalogPackage(global, "etcd", "beta", "2.0.0", "", true), catalogPackage(global, "prometheus", "stable", "1.0.0", "", true),
		shadow, catalogPackage("ops", "etcd", "stable", "1.2.0", "etcd.1.1.0", true),
		catalogPackage("dev", "etcd", "stable", "9.0.0", "", true), catalogPackage("private", "etcd", "stable", "3.0.0", "", true))
	p := NewPackages(cache, direct, global)
	for _, tt := range []struct {
		ns   string
		want []string
	}{
		{"ops", []string{"1.0.0", "1.1.0", "1.2.0"}},
		{"dev", []string{"1.0.0", "1.1.0", "9.0.0"}},
		{"private", []string{"3.0.0"}},
		{global, []string{"1.0.0", "1.1.0"}},
		{"gone", nil},
	} {
		g, err := p.Channel(context.Background(), tt.ns, "stable.etcd.example.com")
		if err != nil {
			t.Fatal(err)
		}
		var got []catalog.Entry
		for _, n := range g.Nodes {
			got = append(got, n.Entry)
		}
		if !slices.Equal(versions(got), tt.want) {
			t.Errorf("channel stable of etcd seen from %s: %v, want %v", tt.ns, versions(got), tt.want)
		}
		if tt.ns == "ops" {
			for _, e := range got {
				if e.Version == "1.1.0" && e.Replaces != "etcd.0.9.0" {
					t.Errorf("1.1.0 seen from ops replaces %q: the global Package was not shadowed by the namespace's", e.Replaces)
				}
			}
		}
	}
	offers, err := p.Offers(context.Background(), "dev", []string{"prometheus"})
	if err != nil || len(offers) != 1 || offers[0].Entry.Package != "prometheus" {
		t.Errorf("prometheus's offers seen from dev: %+v, %v; want the global one", offers, err)
	}
	all, err := p.Offers(context.Background(), "dev", nil)
	if err != nil || len(all) != 5 {
		t.Errorf("every offer seen from dev: %d, %v; want the global four and its own", len(all), err)
	}
	if gets != 0 {
		t.Errorf("%d reads of whole Packages: the cache of their metadata is enough", gets)
	}
	if !p.Sees("dev", catalogPackage(global, "etcd", "stable", "1.0.0", "", true)) || p.Sees("dev", catalogPackage("ops", "etcd", "stable", "1.0.0", "", true)) {
		t.Error("Sees: a global Package is seen from every namespace, another namespace's from none")
	}
}

// A channel's graph, as the OperatorInstall controller and upgrade plan
// read it: every Package of an entry is a node, its image from the metadata, or from
// the whole Package (read from the API server, seen from the namespace)
// when its metadata names none; one whose image cannot be read is a node
// without it, named in unreadable; a read that fails says whose API
// failed.
func TestPackagesChannel(t *testing.T) {
	t.Parallel()
	var gets int
	noImage := catalogPackage("ops", "p", "beta", "1.0.2", "p.1.0.1", true)
	delete(noImage.Annotations, catalog.AnnotationImage)
	cache, direct := cluster(t, &gets, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ops"}},
		catalogPackage("ops", "p", "beta", "1.0.0", "", true), catalogPackage(global, "p", "beta", "1.0.1", "p.1.0.0", false), noImage,
		catalogPackage("ops", "p", "beta", "1.2.0", "p.1.0.2", true))
	g, err := NewPackages(cache, direct, global).Channel(context.Background(), "ops", "beta.p.example.com")
	if err != nil {
		t.Fatal(err)
	}
	nodes, unreadable := g.Nodes, g.Unreadable
	images := map[string]string{}
	for _, n := range nodes {
		images[n.Entry.Version] = n.Image
	}
	want := map[string]string{"1.0.0": "registry.example/ops/p:1.0.0", "1.0.1": "registry.example/inline/p:1.0.1", "1.0.2": "", "1.2.0": "registry.example/ops/p:1.2.0"}
	if len(images) != len(want) {
		t.Errorf("nodes %v, want %v", images, want)
	}
	for v, img := range want {
		if images[v] != img {
			t.Errorf("%s's image %q, want %q", v, images[v], img)
		}
	}
	if gets != 2 {
		t.Errorf("%d reads of whole Packages, want 2: those whose metadata names no image", gets)
	}
	if unreadable == nil || !strings.Contains(unreadable.Error(), "beta.p.example.com.1.0.2") || !strings.Contains(unreadable.Error(), "names no bundle image") {
		t.Errorf("unreadable = %v, want the Package without an image named", unreadable)
	}

	down := interceptor.NewClient(cache.(client.WithWatch), interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
		return apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
	}})
	if _, err := NewPackages(down, direct, global).Channel(context.Background(), "ops", "beta.p.example.com"); err == nil || !strings.Contains(err.Error(), "kapp-controller's packaging API") {
		t.Errorf("a list that failed: %v", err)
	}
}

// A Package its catalog retracted (kept while an install runs it) is no
// node or offer of its channel, and the graph's Retracted names the
// revision that dropped it; one of the current revision is not retracted,
// nor is one the channel does not hold.
func TestPackagesRetracted(t *testing.T) {
	t.Parallel()
	var gets int
	retracted := catalogPackage("ops", "p", "stable", "1.1.2", "p.1.1.1", true)
	retracted.Annotations[catalog.AnnotationRetracted] = "sha256:abc"
	cache, direct := cluster(t, &gets, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ops"}},
		catalogPackage("ops", "p", "stable", "1.0.0", "", true), catalogPackage("ops", "p", "stable", "1.1.1", "p.1.0.0", true), retracted)
	p := NewPackages(cache, direct, global)
	ctx := context.Background()
	const ref = "stable.p.example.com"
	g, err := p.Channel(ctx, "ops", ref)
	if err != nil || len(g.Nodes) != 2 {
		t.Errorf("%d nodes, %v: want the retracted 1.1.2 left out", len(g.Nodes), err)
	}
	offers, err := p.Offers(ctx, "ops", []string{"p"})
	if err != nil || len(offers) != 2 {
		t.Errorf("%d offers, %v: want the retracted 1.1.2 left out", len(offers), err)
	}
	for bundle, want := range map[string]string{"p.1.1.2": "sha256:abc", "p.1.1.1": "", "p.9.0.0": ""} {
		rev, ok := g.Retracted[bundle]
		if rev != want || ok != (want != "") {
			t.Errorf("Retracted[%s] = %q, %v; want %q", bundle, rev, ok, want)
		}
	}
}
