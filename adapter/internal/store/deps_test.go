package store

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

// woken are the BundleDeployments a change of the CRD of Argo CD's
// Applications wakes.
func woken(s *Store) []string {
	return dependentsOf(s, crdNamed("applications.argoproj.io"))
}

func dependentsOf(s *Store, o client.Object) []string {
	var out []string
	for _, r := range s.DependentsOf(context.Background(), o) {
		out = append(out, r.Name)
	}
	slices.Sort(out)
	return out
}

func crdNamed(name string) client.Object {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// appOf is an App that deployed a bundle of package pkg (none: an App of no
// registry+v1 bundle).
func appOf(pkg string) *kappctrlv1alpha1.App {
	app := &kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Namespace: "rukpak-system", Name: "app-of-" + pkg}}
	if pkg != "" {
		app.Annotations = map[string]string{rukpakv1alpha2.AnnotationBundleMetadata: `{"package":{"name":"` + pkg + `","version":"1.0.0"}}`}
	}
	return app
}

// A registry+v1 bundle whose olm.gvk dependency the cluster does not serve
// waits: nothing is installed, the failure says what it waits for, and a
// change of a CRD of the API's group wakes it until the API is served or it
// is forgotten.
func TestGatherWaitsForDependencies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := fakekube.New(nil)
	apis := &fakeAPIs{}
	s := New(k.Client, nil, nil, testCfg, &fakeFetcher{files: webhookBundle(t)}, apis)
	a, b := registryBD("a"), registryBD("b")

	for _, bd := range []*rukpakv1alpha2.BundleDeployment{a, b} {
		sc := scopeOf(bd)
		_, o, stop := s.Gather(ctx, sc)
		err := o.Err
		if err != nil || !stop {
			t.Fatalf("%s: stop %v, err %v: an unmet dependency must stop the install", bd.Name, stop, err)
		}
		if f := o.Failure; f == nil || f.Kind != status.DependenciesUnmet || !strings.Contains(f.Message, "Application") {
			t.Fatalf("%s: failure %+v, want DependenciesUnmet naming Application", bd.Name, f)
		}
		if !s.deps.Waiting(bd.Name) {
			t.Errorf("%s is not waiting", bd.Name)
		}
	}
	if got := woken(s); !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("DependentsOf = %v, want a and b", got)
	}

	s.Forget(a.Name, a.UID)
	if s.deps.Waiting(a.Name) || !cmp.Equal(woken(s), []string{"b"}) {
		t.Errorf("after Forget(a): waiting %v, DependentsOf %v, want only b", s.deps.Waiting(a.Name), woken(s))
	}
	if _, ok := s.cache.get(a); ok {
		t.Error("Forget(a) kept what was fetched for a")
	}

	apis.serve(argoApplication)
	sc := scopeOf(b)
	if _, o, stop := s.Gather(ctx, sc); o.Err != nil || stop || o.Failure != nil {
		t.Fatalf("served: stop %v, err %v, failure %+v", stop, o.Err, o.Failure)
	}
	if got := woken(s); len(got) != 0 {
		t.Errorf("DependentsOf = %v once the dependency is served", got)
	}
}

// readingAPIs answers as the cluster does while an event arrives: a CRD of
// the group asked for changes during the read, and woke says whom that
// event woke.
type readingAPIs struct {
	s    *Store
	woke []string
}

func (a *readingAPIs) Serves(_ context.Context, gvk schema.GroupVersionKind) (bool, error) {
	a.woke = append(a.woke, dependentsOf(a.s, crdNamed("applications."+gvk.Group))...)
	return false, nil
}

// A wait is recorded before the reads that decide it: an event that comes
// while the bundle's dependencies are read wakes it (else it would be lost,
// and a wait with no timer would hang until an unrelated event).
func TestWaitRecordedBeforeItsReads(t *testing.T) {
	t.Parallel()
	apis := &readingAPIs{}
	s := New(fakekube.New(nil).Client, nil, nil, testCfg, &fakeFetcher{files: webhookBundle(t)}, apis)
	apis.s = s
	bd := registryBD("reads")
	if _, sc, stop := gather(t, s, bd); !stop || sc.Failure == nil {
		t.Fatalf("stop %v, failure %+v: the dependency is not served", stop, sc.Failure)
	}
	if !cmp.Equal(apis.woke, []string{"reads"}) {
		t.Errorf("a CRD event during the read woke %v, want [reads]", apis.woke)
	}
}

// The check can be skipped by annotation.
func TestGatherSkipsTheDependencyCheckWhenAsked(t *testing.T) {
	t.Parallel()
	s := New(fakekube.New(nil).Client, nil, nil, testCfg, &fakeFetcher{files: webhookBundle(t)}, &fakeAPIs{})
	bd := registryBD("skip")
	bd.Annotations = map[string]string{rukpakv1alpha2.AnnotationSkipDependencyCheck: "true"}
	if _, sc, stop := gather(t, s, bd); stop || sc.Failure != nil || s.deps.Waiting(bd.Name) {
		t.Fatalf("stop %v, failure %+v, waiting %v", stop, sc.Failure, s.deps.Waiting(bd.Name))
	}
}

// A waiting bundle is woken by what can meet what it waits for, and by
// nothing else: an App of another package or of no bundle, a CRD or an
// APIService of another group cost nothing.
func TestDependentsOf_OnlyWhatCanMeetTheWait(t *testing.T) {
	t.Parallel()
	d := newDependencies(nil, nil, nil, testCfg, nil)
	d.set("needs-argo", waitOf([]convert.Unmet{{Dependency: convert.Dependency{Type: convert.DependencyGVK, GVK: argoApplication}}}))
	d.set("needs-etcd", waitOf([]convert.Unmet{{Dependency: convert.Dependency{Type: convert.DependencyPackage, Package: "etcd"}}}))
	d.set("needs-label", waitOf([]convert.Unmet{{Dependency: convert.Dependency{Type: convert.DependencyLabel}}}))
	s := &Store{deps: d}
	for _, c := range []struct {
		event client.Object
		want  []string
	}{
		{crdNamed("applications.argoproj.io"), []string{"needs-argo"}},
		{crdNamed("v1alpha1.argoproj.io"), []string{"needs-argo"}}, // its APIService
		{crdNamed("widgets.example.com"), nil},
		{crdNamed("v1."), nil},
		{appOf("etcd"), []string{"needs-etcd", "needs-label"}},
		{appOf("prometheus"), []string{"needs-label"}},
		{appOf(""), nil},
		{nil, nil},
	} {
		name := "nil"
		if c.event != nil {
			name = c.event.GetName()
		}
		if got := dependentsOf(s, c.event); !cmp.Equal(got, c.want) {
			t.Errorf("%s woke %v, want %v", name, got, c.want)
		}
	}
	d.Forget("needs-label")
	if got := dependentsOf(s, appOf("prometheus")); got != nil {
		t.Errorf("after Forget: an App of another package woke %v", got)
	}
}

// A change of a catalog Package wakes the catalog bundles of the
// namespaces that see it (its own; every namespace for one of the global
// packaging namespace) that wait for what it may offer (its package, an
// API of a group it provides), and nothing else: a Package of another
// namespace or package, a bundle that is no catalog bundle, a Package of
// no catalog.
func TestDependentsOfPackage(t *testing.T) {
	t.Parallel()
	d := newDependencies(nil, nil, packagingapi.NewPackages(nil, nil, "global"), testCfg, nil)
	catalogWait := func(self string, unmet ...convert.Dependency) *waitFor {
		var u []convert.Unmet
		for _, dep := range unmet {
			u = append(u, convert.Unmet{Dependency: dep})
		}
		w := waitOf(u)
		w.self = self
		return w
	}
	d.set("needs-etcd.ops", catalogWait("ops/a", convert.Dependency{Type: convert.DependencyPackage, Package: "etcd"}))
	d.set("needs-argo.ops", catalogWait("ops/b", convert.Dependency{Type: convert.DependencyGVK, GVK: argoApplication}))
	d.set("needs-etcd.dev", catalogWait("dev/a", convert.Dependency{Type: convert.DependencyPackage, Package: "etcd"}))
	d.set("needs-etcd-not-catalog", waitOf([]convert.Unmet{{Dependency: convert.Dependency{Type: convert.DependencyPackage, Package: "etcd"}}}))
	pkg := func(ns, name string, provides ...schema.GroupVersionKind) client.Object {
		e := catalog.Entry{Package: name, Channel: "stable", Bundle: name + ".v1.0.0", Version: "1.0.0", RefName: "stable." + name}
		a := e.Annotations()
		a[catalog.AnnotationProvides] = catalog.ProvidesValue(provides)
		m := packagingapi.CatalogPackage()
		m.Namespace, m.Name, m.Labels, m.Annotations = ns, e.RefName+".1.0.0", map[string]string{catalog.LabelPackage: name}, a
		return m
	}
	s := &Store{deps: d}
	for _, c := range []struct {
		name  string
		event client.Object
		want  []string
	}{
		{"its package", pkg("ops", "etcd"), []string{"needs-etcd.ops"}},
		{"its package in another namespace", pkg("dev", "etcd"), []string{"needs-etcd.dev"}},
		{"a package that provides its API", pkg("ops", "argocd", argoApplication), []string{"needs-argo.ops"}},
		{"another package", pkg("ops", "prometheus", schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "Prometheus"}), nil},
		{"a namespace nobody waits in", pkg("other", "etcd"), nil},
		{"its package in the global packaging namespace", pkg("global", "etcd"), []string{"needs-etcd.dev", "needs-etcd.ops"}},
		{"its API in the global packaging namespace", pkg("global", "argocd", argoApplication), []string{"needs-argo.ops"}},
		{"a Package of no catalog", &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "etcd.example.com.1.0.0"}}, nil},
	} {
		var got []string
		for _, r := range s.DependentsOfPackage(context.Background(), c.event) {
			got = append(got, r.Name)
		}
		slices.Sort(got)
		if !cmp.Equal(got, c.want) {
			t.Errorf("%s woke %v, want %v", c.name, got, c.want)
		}
	}
}

// A catalog bundle that keeps waiting is looked at again later each time,
// up to a cap; one that stopped waiting starts again from the first delay.
func TestCatalogLookAgainBacksOff(t *testing.T) {
	t.Parallel()
	d := newDependencies(nil, nil, nil, testCfg, nil)
	var got []time.Duration
	for range 9 {
		got = append(got, catalogLookAgain(d.set("dependent", &waitFor{})))
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 320 * time.Second,
		10 * time.Minute, 10 * time.Minute, 10 * time.Minute}
	if !cmp.Equal(got, want) {
		t.Errorf("looks again after %v, want %v", got, want)
	}
	d.Forget("dependent")
	if after := catalogLookAgain(d.set("dependent", &waitFor{})); after != catalogLookFirst {
		t.Errorf("waiting again: looks after %v, want %v", after, catalogLookFirst)
	}
}

// Two catalog bundles whose PackageInstalls need each other: the waiting
// set knows the first waits for the second, so the second goes first.
func TestWaitsOnNamesTheCycle(t *testing.T) {
	t.Parallel()
	d := newDependencies(nil, nil, nil, testCfg, nil)
	d.set("a.ops", &waitFor{self: "ops/a", installs: map[string]bool{"ops/b": true}})
	if !d.waitsOn("ops/a", "ops/b") {
		t.Error("a waits for b, and waitsOn does not say so")
	}
	if d.waitsOn("ops/b", "ops/a") || d.waitsOn("ops/a", "ops/c") {
		t.Error("waitsOn says a wait nobody has")
	}
	d.Forget("a.ops")
	if d.waitsOn("ops/a", "ops/b") {
		t.Error("a forgotten wait is still a wait")
	}
}
