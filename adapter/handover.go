package adapter

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/content"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/takeover"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// takeOver installs what rukpak v0.24.0 installed for bd, in place: an
// as-bundled App applies rukpak's own release manifest (without the
// BundleDeployment owner references), so kapp adopts every object with its
// UID and nothing rolls; rukpak's release Secrets go first, so a rukpak
// still running cannot apply its release over kapp's. rukpak-kapp's own
// rendering takes over at the next generation. It reports false when bd
// has nothing of rukpak's to take over. live is bd's App, nil when none.
func (r *Reconciler) takeOver(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, live *kappctrlv1alpha1.App, facts *status.Facts) (bool, error) {
	if live != nil {
		if !takeover.KeepsRukpakRendering(bd, live.Annotations) {
			return false, nil
		}
		facts.App = live
		if deployedCurrent(live) {
			return true, r.clearRukpak(ctx, bd)
		}
		return true, nil
	}
	in, err := TakeOverInput(ctx, r.client, r.client.RESTMapper(), r.cfg.SystemNamespace, bd, false)
	if err != nil {
		return true, inStep(stepStore, "read what rukpak installed: %w", err)
	}
	if len(in.Releases) == 0 && in.ReleaseErr == nil {
		return false, nil
	}
	plan := takeover.Take(in)
	if plan.Blocked() {
		var msgs []string
		for _, b := range plan.Blockers {
			msgs = append(msgs, b.Message)
		}
		facts.Failure = &status.Failure{Kind: status.TakeOverBlocked, Message: strings.Join(msgs, "; ")}
		return true, nil
	}
	files, err := takeover.Files(takeover.TakeOverObjects(in))
	if err != nil {
		return true, err
	}
	chunks, err := content.Pack(bd.Name, files)
	if err != nil {
		return true, err
	}
	refs := &translate.Content{}
	for _, c := range chunks {
		if err := r.createContentSecret(ctx, bd, c); err != nil {
			return true, inStep(stepStore, "%w", err)
		}
		refs.Secrets = append(refs.Secrets, translate.ContentSecret{Name: c.Name, Dir: c.Dir})
	}
	if err := r.deleteReleaseSecrets(ctx, in.Releases); err != nil {
		return true, err
	}
	asPlain := bd.DeepCopy()
	asPlain.Spec.ProvisionerClassName = rukpakv1alpha2.ClassPlain
	desired, err := translate.AppInStyle(asPlain, r.appConfig(bd.Name), refs, translate.StyleAsBundled)
	if err != nil {
		return true, err
	}
	desired.Annotations[takeover.AnnotationTakenOver] = strconv.FormatInt(bd.Generation, 10)
	log.FromContext(ctx).Info("taking over what rukpak installed", "release", plan.Release, "objects", len(plan.Objects))
	facts.App, err = r.applyApp(ctx, desired, nil)
	return true, err
}

// clearRukpak removes what rukpak keeps for bd once the App deployed it:
// release Secrets (rukpak writes them again if it still runs and wakes),
// and rukpak's finalizers, which would otherwise hold a delete forever.
func (r *Reconciler) clearRukpak(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) error {
	secrets := &corev1.SecretList{}
	if err := r.client.List(ctx, secrets, client.InNamespace(r.cfg.SystemNamespace)); err != nil {
		return inStep(stepStore, "list release secrets: %w", err)
	}
	if err := r.deleteReleaseSecrets(ctx, takeover.ReleaseSecrets(bd, secrets.Items)); err != nil {
		return err
	}
	err := r.patchFinalizers(ctx, bd, func(o client.Object, _ string) bool {
		changed := false
		for _, f := range takeover.RukpakFinalizers {
			changed = controllerutil.RemoveFinalizer(o, f) || changed
		}
		return changed
	})
	if err != nil {
		return inStep(stepStore, "remove rukpak's finalizers: %w", err)
	}
	return nil
}

func (r *Reconciler) deleteReleaseSecrets(ctx context.Context, releases []corev1.Secret) error {
	for i := range releases {
		s := &releases[i]
		if err := r.client.Delete(ctx, s, client.Preconditions{UID: &s.UID}); client.IgnoreNotFound(err) != nil {
			return inStep(stepStore, "delete rukpak's release secret %s: %w", s.Name, err)
		}
	}
	return nil
}

// release hands a BundleDeployment whose class the adapter no longer claims
// to whoever claims it now, deleting nothing it installed. The App is first
// re-applied to put Helm's ownership metadata and the BundleDeployment
// owner reference back on every object (translate.Released), so rukpak's
// next install adopts them in place, unless that would fail on an immutable
// field (takeover.Back); it is marked noopDelete and, once kapp-controller
// deployed it, deleted. The content the adapter stored goes, then the
// finalizer. kapp's record of the App stays in the system namespace, so the
// objects are adopted again, not duplicated, if the class comes back.
func (r *Reconciler) release(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) error {
	if !controllerutil.ContainsFinalizer(bd, Finalizer) {
		return nil
	}
	app, err := r.liveApp(ctx, bd.Name)
	switch {
	case err != nil:
		return err
	case app == nil:
		if err := r.pruneContent(ctx, bd.Name, nil); err != nil {
			return err
		}
		certs := &corev1.Secret{}
		certs.Namespace, certs.Name = r.cfg.SystemNamespace, certSecretName(bd.Name)
		if err := r.client.Delete(ctx, certs); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete webhook certificate secret: %w", err)
		}
		return r.letGo(ctx, bd)
	case !app.DeletionTimestamp.IsZero():
		// The App watch brings this back once kapp-controller let it go.
		return nil
	}
	mode, released := app.Annotations[translate.AnnotationReleased]
	if !released {
		back := takeover.Back(bd, app, nil, nil, nil)
		rel, err := translate.Released(app, bd, back.Adoptable)
		if err != nil {
			return err
		}
		if _, err := serverSideApply(ctx, r.client, rel); err != nil {
			return fmt.Errorf("hand App %s/%s back: %w", app.Namespace, app.Name, err)
		}
		log.FromContext(ctx).Info("releasing: provisioner class no longer claimed; the installed objects stay",
			"class", bd.Spec.ProvisionerClassName, "adoptable", back.Adoptable, "notes", strings.Join(back.Reasons, "; "))
		return nil
	}
	if mode == translate.ReleasedAdoptable && !app.Spec.NoopDelete {
		return fmt.Errorf("App %s/%s is marked released but would delete what it installed", app.Namespace, app.Name)
	}
	if mode == translate.ReleasedAdoptable && !deployedCurrent(app) && !failedCurrent(app) {
		// kapp-controller is putting Helm's metadata back.
		return nil
	}
	if err := r.client.Delete(ctx, app); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("delete App %s/%s: %w", app.Namespace, app.Name, err)
	}
	return nil
}

// failedCurrent says kapp-controller ran the App's current spec and failed.
func failedCurrent(app *kappctrlv1alpha1.App) bool {
	return app.Status.ObservedGeneration == app.Generation && len(app.Status.Conditions) > 0 &&
		app.Status.Conditions[0].Type == kappctrlv1alpha1.ReconcileFailed
}
