package appmode

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/takeover"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
)

// Release hands a BundleDeployment whose class the adapter no longer claims
// to whoever claims it now, deleting nothing it installed. The App is first
// re-applied to put Helm's ownership metadata and the BundleDeployment
// owner reference back on every object (translate.Released), so rukpak's
// next install adopts them in place, unless that would fail on an immutable
// field (takeover.Back); it is marked noopDelete and, once kapp-controller
// deployed it, deleted. The content the adapter stored goes; done then
// says the BundleDeployment may go. kapp's record of the App stays in the
// namespace, so the objects are adopted again, not duplicated, if the class
// comes back.
func (m *Mode) Release(ctx context.Context, s *scope.Scope) (bool, error) {
	bd, app := s.BD, s.Live
	switch {
	case app == nil:
		if err := m.store.Prune(ctx, s.AppNS, bd.Name, nil); err != nil {
			return false, err
		}
		if err := m.store.RemoveCerts(ctx, bd.Name); err != nil {
			return false, err
		}
		return true, nil
	case !app.DeletionTimestamp.IsZero():
		// The App watch brings this back once kapp-controller let it go.
		return false, nil
	}
	mode, released := app.Annotations[translate.AnnotationReleased]
	if !released {
		back := takeover.Back(bd, app, nil, nil, nil)
		rel, err := translate.Released(app, bd, back.Adoptable)
		if err != nil {
			return false, err
		}
		if _, err := kube.ServerSideApply(ctx, m.client, rel); err != nil {
			return false, fmt.Errorf("hand App %s/%s back: %w", app.Namespace, app.Name, err)
		}
		log.FromContext(ctx).Info("releasing: provisioner class no longer claimed; the installed objects stay",
			"class", bd.Spec.ProvisionerClassName, "adoptable", back.Adoptable, "notes", strings.Join(back.Reasons, "; "))
		return false, nil
	}
	if mode == translate.ReleasedAdoptable && !app.Spec.NoopDelete {
		return false, fmt.Errorf("App %s/%s is marked released but would delete what it installed", app.Namespace, app.Name)
	}
	if mode == translate.ReleasedAdoptable && !kube.DeployedCurrent(app) && !kube.FailedCurrent(app) {
		// kapp-controller is putting Helm's metadata back.
		return false, nil
	}
	if err := m.client.Delete(ctx, app); client.IgnoreNotFound(err) != nil {
		return false, fmt.Errorf("delete App %s/%s: %w", app.Namespace, app.Name, err)
	}
	return false, nil
}
