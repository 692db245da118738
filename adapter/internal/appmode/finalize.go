package appmode

import (
	"context"

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
func (m *AppInstaller) Finalize(ctx context.Context, s *scope.Scope) (bool, error) {
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
	// An orphaning delete keeps what the App installed; a noopDelete set
	// before (a hand-back begun) is never taken back here.
	keep := app.Spec.NoopDelete || kube.Orphaning(s.BD, app)
	return false, kube.DeleteLeaving(ctx, m.client, "App", app, &app.Spec.NoopDelete, keep)
}
