package appmode

import (
	"context"
	"fmt"
	"strings"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
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
func (m *AppInstaller) Release(ctx context.Context, s *scope.Scope) (bool, error) {
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
	if !released && takeover.Back(bd, app, nil, nil, nil).Adoptable && !deploying(app) {
		// The hand-back is not taken back, and the cache may be behind:
		// a run it has not shown yet would hold the hand-back until kapp's
		// timeout, and the hand-back may already be applied. The App as
		// the API server has it decides.
		fresh := &kappctrlv1alpha1.App{}
		if err := m.direct.Get(ctx, client.ObjectKeyFromObject(app), fresh); err != nil {
			return false, fmt.Errorf("read App %s/%s before handing it back: %w", app.Namespace, app.Name, err)
		}
		app = fresh
		mode, released = app.Annotations[translate.AnnotationReleased]
	}
	if !released {
		back := takeover.Back(bd, app, nil, nil, nil)
		if back.Adoptable && deploying(app) {
			// kapp-controller runs one deploy of an App at a time, and the
			// release's would wait for this one, which may wait for a
			// workload's readiness until kapp's timeout: it is stopped first.
			return false, m.cancel(ctx, s, app)
		}
		rel, err := translate.Released(app, bd, back.Adoptable)
		if err != nil {
			return false, err
		}
		if _, err := kube.ServerSideApply(ctx, m.client, rel); err != nil {
			return false, fmt.Errorf("hand App %s/%s back: %w", app.Namespace, app.Name, err)
		}
		log.FromContext(ctx).Info("releasing: provisioner class no longer claimed; the installed objects stay",
			"class", bd.Spec.ProvisionerClassName, "adoptable", back.Adoptable, "notes", strings.Join(back.Reasons, "; "))
		if back.Adoptable {
			m.waitsFor(s, "kapp-controller to put Helm's ownership metadata back on the objects of App %s/%s; then the App is deleted and the objects stay", app.Namespace, app.Name)
		}
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
	m.waitsFor(s, "kapp-controller to delete App %s/%s without deleting what it installed (noopDelete)", app.Namespace, app.Name)
	return false, nil
}

// deploying says a run of kapp-controller's is in flight for the App: it
// marked the run Reconciling and has not since observed a canceled spec
// (a canceled App runs nothing, and keeps the condition it had).
func deploying(app *kappctrlv1alpha1.App) bool {
	if app.Spec.Canceled && app.Status.ObservedGeneration == app.Generation {
		return false
	}
	return len(app.Status.Conditions) > 0 && app.Status.Conditions[0].Type == kappctrlv1alpha1.Reconciling
}

// cancel stops the App's deploy in flight (kapp-controller kills kapp when
// spec.canceled is set); the App's status change brings the hand-back back.
func (m *AppInstaller) cancel(ctx context.Context, s *scope.Scope, app *kappctrlv1alpha1.App) error {
	if app.Spec.Canceled {
		return nil
	}
	if _, err := kube.ServerSideApply(ctx, m.client, translate.Canceled(app)); err != nil {
		return fmt.Errorf("stop the deploy in flight of App %s/%s: %w", app.Namespace, app.Name, err)
	}
	m.waitsFor(s, "kapp-controller to stop the deploy in flight of App %s/%s (spec.canceled), so the objects can be handed back at once", app.Namespace, app.Name)
	return nil
}

// waitsFor records what a hand-back waits for, once per step taken.
func (m *AppInstaller) waitsFor(s *scope.Scope, format string, args ...any) {
	if m.recorder == nil {
		return
	}
	m.recorder.Eventf(s.BD, nil, corev1.EventTypeNormal, ReasonReleasing, "Release",
		"The class %s is not claimed by rukpak-kapp: releasing, waiting for "+format, append([]any{s.BD.Spec.ProvisionerClassName}, args...)...)
}

// ReasonReleasing is the Event reason of each step of a hand-back.
const ReasonReleasing = "Releasing"
