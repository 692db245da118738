package appmode

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
)

// Finalize deletes the BundleDeployment's App; kapp-controller then removes
// everything it installed, and the App watch brings the BundleDeployment
// back. gone says the App is gone and the BundleDeployment may go.
func (m *Mode) Finalize(ctx context.Context, s *scope.Scope) (bool, error) {
	app := s.Live
	if app == nil {
		return true, nil
	}
	if app.DeletionTimestamp.IsZero() {
		if err := m.client.Delete(ctx, app); client.IgnoreNotFound(err) != nil {
			return false, fmt.Errorf("delete App %s/%s: %w", app.Namespace, app.Name, err)
		}
	}
	return false, nil
}
