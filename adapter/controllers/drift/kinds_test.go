package drift

import (
	"errors"
	"io"
	"os"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// The kinds watched from the start are exactly those the adapter's
// ClusterRole lets it list and watch for drift repair and health.
func TestFromStart_MatchesTheClusterRole(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../../config/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var granted []schema.GroupResource
	for _, doc := range strings.Split(string(data), "\n---\n") {
		role := rbacv1.ClusterRole{}
		if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
			t.Fatal(err)
		}
		if role.Kind != "ClusterRole" {
			continue
		}
		for _, r := range role.Rules {
			// The APIs the adapter serves itself are no installed kinds, nor
			// the Packages catalogs publish (the catalog controller watches
			// them); a rule limited to names (kapp-controller-config) watches
			// no kind.
			if !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "watch") || len(r.ResourceNames) > 0 ||
				slices.Contains(r.APIGroups, "core.rukpak.io") || slices.Contains(r.APIGroups, "catalogs.rukpak-kapp.dev") ||
				slices.Contains(r.APIGroups, "data.packaging.carvel.dev") {
				continue
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					granted = append(granted, schema.GroupResource{Group: g, Resource: res})
				}
			}
		}
	}
	less := func(a, b schema.GroupResource) int { return strings.Compare(a.String(), b.String()) }
	want := slices.SortedFunc(slices.Values(granted), less)
	var watched []schema.GroupResource
	for gk, gvr := range fromStart {
		watched = append(watched, gvr.GroupResource())
		if plural, _ := meta.UnsafeGuessKindToResource(gvr.GroupVersion().WithKind(gk.Kind)); plural != gvr {
			t.Errorf("kind %v is watched as %v", gk, gvr)
		}
	}
	got := slices.SortedFunc(slices.Values(watched), less)
	if !slices.Equal(got, want) {
		t.Errorf("watched from the start:\n %v\nthe ClusterRole grants list and watch on:\n %v", got, want)
	}
}

func managed(manager string, at time.Time) metav1.ManagedFieldsEntry {
	t := metav1.NewTime(at)
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Time: &t}
}

// A delete while a new spec deploys is kapp's prune only for what kapp
// applied before the spec changed, and only once the App deployed something.
func TestByThisRun(t *testing.T) {
	t.Parallel()
	changed := time.Date(2026, 1, 1, 12, 0, 10, 0, time.UTC)
	deployed := &kappctrlv1alpha1.AppStatusDeploy{KappDeployStatus: &kappctrlv1alpha1.KappDeployStatus{}}
	tests := []struct {
		name   string
		deploy *kappctrlv1alpha1.AppStatusDeploy
		fields []metav1.ManagedFieldsEntry
		want   bool
	}{
		{"first install: nothing to prune", nil, []metav1.ManagedFieldsEntry{managed(KappManager, changed)}, true},
		{"first install, a run under way", &kappctrlv1alpha1.AppStatusDeploy{}, nil, true},
		{"applied by the new spec's run", deployed, []metav1.ManagedFieldsEntry{managed(KappManager, changed.Add(3*time.Second))}, true},
		{"applied within the second of the change: taken for a prune", deployed, []metav1.ManagedFieldsEntry{managed(KappManager, changed)}, false},
		{"applied by an earlier run: kapp may prune it", deployed, []metav1.ManagedFieldsEntry{managed(KappManager, changed.Add(-time.Second))}, false},
		{"written since by someone else only", deployed, []metav1.ManagedFieldsEntry{managed(KappManager, changed.Add(-time.Minute)), managed("kubectl", changed.Add(time.Second))}, false},
		{"no record", deployed, nil, false},
	}
	for _, tt := range tests {
		app := &kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{managed("rukpak-kapp", changed)}}}
		app.Status.Deploy = tt.deploy
		m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ManagedFields: tt.fields}}
		if got := byThisRun(app, m); got != tt.want {
			t.Errorf("%s: byThisRun = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A failing watch is counted once per spell, whatever the error, until a
// list or watch works; a watch that ends as watches do has not failed.
func TestWatchFailing(t *testing.T) {
	t.Parallel()
	gk := schema.GroupKind{Kind: "ConfigMap"}
	k := newKinds(t.Context(), nil, nil, nil)
	k.running[gk] = func() {}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New("not yet authorized"))
	refused := errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	steps := []struct {
		err     error // nil: a list or watch that worked
		logged  bool
		failing bool
	}{
		{err: io.EOF, logged: false, failing: false},
		{err: refused, logged: true, failing: true},
		{err: forbidden, logged: false, failing: true},
		{err: nil, failing: false},
		{err: apierrors.NewResourceExpired("too old"), logged: false, failing: false},
		{err: forbidden, logged: true, failing: true},
	}
	for i, s := range steps {
		logged := false
		if s.err == nil {
			k.watchWorks(gk)
		} else {
			logged = k.watchFailed(gk, s.err)
		}
		if logged != s.logged || k.failing[gk] != s.failing {
			t.Errorf("step %d (%v): logged %v, failing %v; want %v, %v", i, s.err, logged, k.failing[gk], s.logged, s.failing)
		}
	}
	if !strings.Contains(failingMessage(forbidden), "grant the adapter list and watch") || strings.Contains(failingMessage(refused), "grant") {
		t.Errorf("only a forbidden watch names the grant: %q, %q", failingMessage(forbidden), failingMessage(refused))
	}
	// A stopped watch's last error counts for nothing.
	delete(k.running, gk)
	k.watchWorks(gk)
	if k.watchFailed(gk, refused) || k.failing[gk] {
		t.Error("a watch that no longer runs was marked failing")
	}
}
