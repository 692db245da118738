package appmode

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
)

// Finalize deletes the BundleDeployment's App; kapp-controller then removes
// everything it installed, and the App watch brings the BundleDeployment
// back. A delete that orphans dependents (propagationPolicy Orphan) deletes
// the App with noopDelete instead, so every installed object stays. Once
// the App is gone, the content the adapter stored for it goes too (the
// garbage collector leaves what an orphaning delete let go), and gone says
// the BundleDeployment may go.
func (m *Mode) Finalize(ctx context.Context, s *scope.Scope) (bool, error) {
	app := s.Live
	if app == nil {
		if err := m.store.Prune(ctx, s.AppNS, s.BD.Name, nil); err != nil {
			return false, err
		}
		return true, m.store.RemoveCerts(ctx, s.BD.Name)
	}
	if !app.DeletionTimestamp.IsZero() {
		return false, nil
	}
	if kube.Orphaning(s.BD, app) && !app.Spec.NoopDelete {
		before := app.DeepCopy()
		app.Spec.NoopDelete = true
		if err := m.client.Patch(ctx, app, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), client.FieldOwner(fieldowner.Name)); err != nil {
			return false, fmt.Errorf("keep what App %s/%s installed, as the orphaning delete asks: %w", app.Namespace, app.Name, err)
		}
	}
	if err := m.client.Delete(ctx, app); client.IgnoreNotFound(err) != nil {
		return false, fmt.Errorf("delete App %s/%s: %w", app.Namespace, app.Name, err)
	}
	return false, nil
}
