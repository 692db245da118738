package store

import (
	"context"
	"slices"
	"strings"
	"testing"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	s := New(k.Client, testCfg, &fakeFetcher{files: webhookBundle(t)}, apis)
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
	s := New(fakekube.New(nil).Client, testCfg, &fakeFetcher{files: webhookBundle(t)}, apis)
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
	s := New(fakekube.New(nil).Client, testCfg, &fakeFetcher{files: webhookBundle(t)}, &fakeAPIs{})
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
	d := newDependencies(nil, testCfg, nil)
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
