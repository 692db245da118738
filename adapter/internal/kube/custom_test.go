package kube

import (
	"context"
	"errors"
	"slices"
	"testing"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
)

// informers is a cache that records which informers it was asked for and
// which it removed; none has listed yet.
type informers struct {
	cache.Cache
	got, removed []string
	// fail is a kind whose informer cannot be had.
	fail string
}

func (f *informers) GetInformer(_ context.Context, obj client.Object, _ ...cache.InformerGetOption) (cache.Informer, error) {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if kind == f.fail {
		return nil, errors.New("the cache is stopping")
	}
	f.got = append(f.got, kind)
	return unsynced{}, nil
}

func (f *informers) RemoveInformer(_ context.Context, obj client.Object) error {
	f.removed = append(f.removed, obj.GetObjectKind().GroupVersionKind().Kind)
	return nil
}

type unsynced struct{ cache.Informer }

func (unsynced) HasSynced() bool { return false }

func appInstalling(kinds ...string) *kappctrlv1alpha1.App {
	app := &kappctrlv1alpha1.App{}
	st := &kappctrlv1alpha1.KappDeployStatus{}
	for _, k := range kinds {
		st.AssociatedResources.GroupKinds = append(st.AssociatedResources.GroupKinds, metav1.GroupKind{Group: "example.com", Kind: k})
	}
	st.AssociatedResources.GroupKinds = append(st.AssociatedResources.GroupKinds, metav1.GroupKind{Group: "apps", Kind: "Deployment"})
	app.Status.Deploy = &kappctrlv1alpha1.AppStatusDeploy{KappDeployStatus: st}
	return app
}

// A kind's informer runs while an install reads its objects, and stops
// when the last one no longer does (it moved on, or was forgotten), never
// because a look failed; only custom kinds are read, and a kind that is
// always Current is not.
func TestCustomObjectsInformers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Group: "example.com", Version: "v1"}})
	for _, k := range []string{"Widget", "Gadget", "Setting"} {
		mapper.Add(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: k}, meta.RESTScopeNamespace)
	}
	f := &informers{}
	c := &CustomObjects{cache: f, mapper: mapper, watched: map[schema.GroupKind]bool{}, waiting: map[schema.GroupKind]map[string]bool{},
		described: map[string]schema.GroupKind{}, readBy: map[string]map[schema.GroupKind]schema.GroupVersionKind{}}
	rules, err := status.HealthRulesOf(map[string]string{rukpakv1alpha2.AnnotationHealthExpressions: `[{apiVersion: example.com/v1, kind: Setting, current: "true"}]`})
	if err != nil {
		t.Fatal(err)
	}
	observe := func(bd string, app *kappctrlv1alpha1.App) *status.Installed {
		in := &status.Installed{Rules: rules}
		if err := c.Observe(ctx, app, bd, in); err != nil {
			t.Fatal(err)
		}
		return in
	}

	in := observe("a", appInstalling("Widget", "Gadget", "Setting"))
	if len(in.Unread) != 2 || in.Unread[0].Why[:34] != "the adapter has not listed them ye" {
		t.Fatalf("unread %+v, want Widget and Gadget, not yet listed", in.Unread)
	}
	// A look that fails before it reaches Widget stops nothing.
	f.fail = "Gadget"
	if err := c.Observe(ctx, appInstalling("Gadget", "Widget"), "a", &status.Installed{Rules: rules}); err == nil {
		t.Fatal("a failed informer was no error")
	}
	if len(f.removed) != 0 {
		t.Fatalf("a failed look removed %q", f.removed)
	}
	f.fail = ""
	observe("b", appInstalling("Widget"))
	if !slices.Equal(f.got, []string{"Widget", "Gadget", "Widget"}) {
		t.Fatalf("informers asked for %q", f.got)
	}
	observe("a", appInstalling("Widget"))
	if !slices.Equal(f.removed, []string{"Gadget"}) {
		t.Fatalf("removed %q, want Gadget, which no install reads any more", f.removed)
	}
	c.Forget("a", "")
	if len(f.removed) != 1 {
		t.Fatalf("removed %q while b still reads Widgets", f.removed)
	}
	c.Forget("b", "")
	if !slices.Equal(f.removed, []string{"Gadget", "Widget"}) {
		t.Fatalf("removed %q, want Widget too", f.removed)
	}
	if c.watched[schema.GroupKind{Group: "example.com", Kind: "Widget"}] {
		t.Error("Widget still counted as watched")
	}
}
