package store

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/pure/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

func woken(s *Store) []string {
	var out []string
	for _, r := range s.Wake(context.Background(), nil) {
		out = append(out, r.Name)
	}
	slices.Sort(out)
	return out
}

// A registry+v1 bundle whose olm.gvk dependency the cluster does not serve
// waits: nothing is installed, the failure says what it waits for, and any
// event wakes it until the API is served or it is forgotten.
func TestGatherWaitsForDependencies(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := fakekube.New(nil)
	apis := &fakeAPIs{}
	s := New(k.Client, nil, testCfg, &fakeFetcher{files: webhookBundle(t)}, apis)
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
		t.Errorf("Wake = %v, want a and b", got)
	}

	s.Forget(a.Name, a.UID)
	if s.deps.Waiting(a.Name) || !cmp.Equal(woken(s), []string{"b"}) {
		t.Errorf("after Forget(a): waiting %v, Wake %v, want only b", s.deps.Waiting(a.Name), woken(s))
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
		t.Errorf("Wake = %v once the dependency is served", got)
	}
}

// The check can be skipped by annotation.
func TestGatherSkipsTheDependencyCheckWhenAsked(t *testing.T) {
	t.Parallel()
	s := New(fakekube.New(nil).Client, nil, testCfg, &fakeFetcher{files: webhookBundle(t)}, &fakeAPIs{})
	bd := registryBD("skip")
	bd.Annotations = map[string]string{rukpakv1alpha2.AnnotationSkipDependencyCheck: "true"}
	if _, sc, stop := gather(t, s, bd); stop || sc.Failure != nil || s.deps.Waiting(bd.Name) {
		t.Fatalf("stop %v, failure %+v, waiting %v", stop, sc.Failure, s.deps.Waiting(bd.Name))
	}
}
