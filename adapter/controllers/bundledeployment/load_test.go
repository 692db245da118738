package bundledeployment

import (
	"context"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// noWrites fails t on any write through the client it intercepts.
func noWrites(t *testing.T) interceptor.Funcs {
	fail := func(verb string, o client.Object) error {
		t.Errorf("load wrote: %s %T %s", verb, o, o.GetName())
		return nil
	}
	return interceptor.Funcs{
		Create: func(_ context.Context, _ client.WithWatch, o client.Object, _ ...client.CreateOption) error {
			return fail("create", o)
		},
		Update: func(_ context.Context, _ client.WithWatch, o client.Object, _ ...client.UpdateOption) error {
			return fail("update", o)
		},
		Patch: func(_ context.Context, _ client.WithWatch, o client.Object, _ client.Patch, _ ...client.PatchOption) error {
			return fail("patch", o)
		},
		Delete: func(_ context.Context, _ client.WithWatch, o client.Object, _ ...client.DeleteOption) error {
			return fail("delete", o)
		},
		SubResourcePatch: func(_ context.Context, _ client.Client, _ string, o client.Object, _ client.Patch, _ ...client.SubResourcePatchOption) error {
			return fail("status patch", o)
		},
	}
}

// TestLoad_OnlyReads: load finds what is missing (the adapter's finalizer, a
// v1alpha1 template's Bundle) and hands it to the steps; it makes nothing.
func TestLoad_OnlyReads(t *testing.T) {
	t.Parallel()
	req := ctrl.Request{NamespacedName: client.ObjectKey{Name: "a"}}

	t.Run("v1alpha2, no finalizer yet", func(t *testing.T) {
		t.Parallel()
		f := setup(t, fakeApp{calls: &calls{}}, fakeServe{}, []client.Object{newBD("a", rukpakv1alpha2.ClassPlain)}, noWrites(t))
		l, err := f.r.load(context.Background(), req)
		if err != nil || l == nil || l.route != InstallApp || l.readErr != nil {
			t.Fatalf("load = %+v, %v", l, err)
		}
	})

	t.Run("v1alpha1, its template's Bundle not made yet", func(t *testing.T) {
		t.Parallel()
		log := &calls{}
		b := &fakeBundles{calls: log}
		f := v1alpha1Setup(t, fakeApp{calls: log}, log, b, v1alpha1Of("a", imageV1alpha1))
		l, err := f.r.load(context.Background(), req)
		if err != nil || l == nil || !l.firstAPI || l.s.Generated == nil || l.s.Generated.Missing == nil || l.s.Generated.Bundle != nil {
			t.Fatalf("load = %+v, %v", l, err)
		}
		expectCalls(t, log, "store.List")
		if f.written != nil || f.v1alpha2 != 0 {
			t.Fatal("load wrote a status")
		}
		if len(b.listed) != 0 {
			t.Fatalf("load made %d Bundles", len(b.listed))
		}
	})
}
