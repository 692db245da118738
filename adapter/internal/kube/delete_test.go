package kube

import (
	"context"
	"slices"
	"testing"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

func TestDeleteLeaving(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	app := func(noop bool, finalizers ...string) *kappctrlv1alpha1.App {
		return &kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "web", Finalizers: finalizers},
			Spec: kappctrlv1alpha1.AppSpec{NoopDelete: noop}}
	}
	for _, tt := range []struct {
		name     string
		stored   *kappctrlv1alpha1.App
		keep     bool
		deleting bool
		wrote    []string
		noop     bool
	}{
		{name: "keep: noopDelete set first, then the delete", stored: app(false), keep: true,
			wrote: []string{"patch App " + appNS + "/web", "delete App " + appNS + "/web"}, noop: true},
		{name: "the field already says it: only the delete", stored: app(true), keep: true,
			wrote: []string{"delete App " + appNS + "/web"}, noop: true},
		{name: "a switch under way takes noopDelete back", stored: app(true), keep: false,
			wrote: []string{"patch App " + appNS + "/web", "delete App " + appNS + "/web"}, noop: false},
		{name: "a delete under way is not asked again, the field still follows keep", stored: app(false, "kapp.k14s.io/delete"), keep: true, deleting: true,
			wrote: []string{"patch App " + appNS + "/web"}, noop: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := fakekube.New(nil, tt.stored)
			live := &kappctrlv1alpha1.App{}
			if err := k.Raw.Get(ctx, client.ObjectKeyFromObject(tt.stored), live); err != nil {
				t.Fatal(err)
			}
			if tt.deleting {
				if err := k.Raw.Delete(ctx, live.DeepCopy()); err != nil {
					t.Fatal(err)
				}
				if err := k.Raw.Get(ctx, client.ObjectKeyFromObject(live), live); err != nil {
					t.Fatal(err)
				}
			}
			if err := DeleteLeaving(ctx, k.Client, "App", live, &live.Spec.NoopDelete, tt.keep); err != nil {
				t.Fatal(err)
			}
			if got := k.Wrote(); !slices.Equal(got, tt.wrote) {
				t.Fatalf("wrote %v, want %v", got, tt.wrote)
			}
			after := &kappctrlv1alpha1.App{}
			err := k.Raw.Get(ctx, client.ObjectKeyFromObject(live), after)
			switch {
			case tt.deleting && err != nil:
				t.Fatalf("the App held by its finalizer is gone: %v", err)
			case tt.deleting && after.Spec.NoopDelete != tt.noop:
				t.Fatalf("noopDelete = %t, want %t", after.Spec.NoopDelete, tt.noop)
			case !tt.deleting && !apierrors.IsNotFound(err):
				t.Fatalf("the App is still there: %v", err)
			}
		})
	}

	t.Run("a stale read is refused, never deleted on", func(t *testing.T) {
		t.Parallel()
		k := fakekube.New(nil, app(false))
		stale := &kappctrlv1alpha1.App{}
		if err := k.Raw.Get(ctx, client.ObjectKey{Namespace: appNS, Name: "web"}, stale); err != nil {
			t.Fatal(err)
		}
		moved := stale.DeepCopy()
		moved.Labels = map[string]string{"someone": "else"}
		if err := k.Raw.Update(ctx, moved); err != nil {
			t.Fatal(err)
		}
		err := DeleteLeaving(ctx, k.Client, "App", stale, &stale.Spec.NoopDelete, true)
		if !apierrors.IsConflict(err) {
			t.Fatalf("DeleteLeaving on a stale App: %v, want a conflict", err)
		}
		if got := k.Wrote(); len(got) != 1 || got[0] != "patch App "+appNS+"/web" {
			t.Fatalf("wrote %v, want the refused patch only", got)
		}
	})

	t.Run("gone already is no error", func(t *testing.T) {
		t.Parallel()
		k := fakekube.New(nil)
		gone := app(false)
		if err := DeleteLeaving(ctx, k.Client, "App", gone, &gone.Spec.NoopDelete, true); err != nil {
			t.Fatal(err)
		}
	})
}
