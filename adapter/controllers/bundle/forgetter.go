package bundle

import (
	"context"
	"fmt"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/contenturl"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Forgetter drops the stored content of a Bundle or BundleDeployment when
// it is deleted. It runs on every replica: each keeps what it fetched.
type Forgetter struct {
	cache cache.Cache
	store *contenturl.Tarballs
}

// NewForgetter forgets, in s, what the objects of c's informers held.
func NewForgetter(c cache.Cache, s *contenturl.Tarballs) *Forgetter {
	return &Forgetter{cache: c, store: s}
}

// NeedLeaderElection is false: every replica stores content.
func (f *Forgetter) NeedLeaderElection() bool { return false }

// Start follows deletions until ctx ends.
func (f *Forgetter) Start(ctx context.Context) error {
	for _, obj := range []client.Object{&rukpakv1alpha1.Bundle{}, &rukpakv1alpha2.BundleDeployment{}} {
		inf, err := f.cache.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("content store: watch %T: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{DeleteFunc: f.deleted}); err != nil {
			return fmt.Errorf("content store: watch %T: %w", obj, err)
		}
	}
	<-ctx.Done()
	return nil
}

func (f *Forgetter) deleted(obj any) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if o, ok := obj.(client.Object); ok {
		f.store.Forget(o.GetUID())
	}
}
