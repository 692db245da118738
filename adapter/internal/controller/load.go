package controller

import (
	"context"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/contenturl"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// loaded is what load found: the route and the Scope it runs on, filled
// before any route runs and never assigned again.
type loaded struct {
	route Route
	s     *scope.Scope
	// modeErr says why the install-with annotation names no mode
	// (InstallInvalid).
	modeErr error
	// stop, when set, is reported in place of the route's run: the
	// finalizer, the App or the generated Bundle could not be read or made,
	// or is not to be made (the Bundle limit, an upload source).
	stop *scope.Outcome
	// again asks for another look with backoff and nothing reported:
	// another writer changed the BundleDeployment first.
	again bool
	// write is how the status is written: at v1alpha2, or through the
	// Bundles seam for rukpak's first API.
	write statusWriter
}

// load reads what one reconcile of the BundleDeployment needs, in this
// order: the BundleDeployment, where its App lives, the route; for an
// install, the adapter's finalizer (its patch updates the BundleDeployment
// the view is taken from); the view; the live App; for rukpak's first API,
// its generated Bundles (the template's made by an install); and the facts
// the status is computed from, and the writer of its status. nil: the
// BundleDeployment is gone.
func (r *Reconciler) load(ctx context.Context, req ctrl.Request) (*loaded, error) {
	bd := &rukpakv1alpha2.BundleDeployment{}
	if err := r.client.Get(ctx, req.NamespacedName, bd); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	ns, err := r.placed.place(ctx, r.client, r.set.Config, bd.Name)
	if err != nil {
		return nil, err
	}
	mode, modeErr := installWith(bd, r.set.InstallDefault)
	l := &loaded{modeErr: modeErr, write: r.writeV1alpha2, route: Decide(Situation{Claimed: r.set.Classes.Claims(bd), Deleting: !bd.DeletionTimestamp.IsZero(),
		HasFinalizer: controllerutil.ContainsFinalizer(bd, kube.Finalizer), Mode: mode, ModeInvalid: modeErr != nil})}
	if l.route == Skip {
		return l, nil
	}
	firstAPI := r.servesFirstAPI(bd)
	if firstAPI {
		l.write = r.bundles.Report
	}
	cfg := r.set.Config
	cfg.AppNamespace = ns
	now := r.now()
	facts := &status.Facts{BD: bd, Now: now, TemplateTimeout: cfg.TemplateTimeout, SystemNamespace: cfg.SystemNamespace,
		ContentURL: contenturl.For(cfg.ContentAddress, contenturl.KindBundleDeployment, bd.Name)}
	l.s = &scope.Scope{BD: bd, View: bd, Mode: mode, AppNS: ns, Cfg: cfg, Now: now, Facts: facts}
	installs := l.route.Installs()
	if installs {
		if err := kube.PatchFinalizers(ctx, r.client, bd, controllerutil.AddFinalizer); apierrors.IsConflict(err) {
			l.again = true
			return l, nil
		} else if err != nil {
			l.stop = &scope.Outcome{Err: scope.InStep(scope.StepStore, "add finalizer: %w", err)}
			return l, nil
		}
	}
	l.s.View = r.viewOf(bd, firstAPI)
	live, err := r.readApp(ctx, ns, bd.Name)
	switch {
	case err != nil && installs:
		l.stop = &scope.Outcome{Err: scope.InStep(scope.StepStore, "%w", err)}
		return l, nil
	case err != nil:
		l.stop = &scope.Outcome{Err: err}
		return l, nil
	}
	l.s.Live = live
	if l.route == Remove {
		// Nothing is written before the removal's status: it tells of the
		// App as read.
		facts.App = live
	}
	if l.route != HandBack && firstAPI {
		g, reported, stop := r.bundles.Load(ctx, bd, installs)
		l.s.Generated = g
		facts.BD = reported
		if installs {
			l.stop = stop
		}
	}
	return l, nil
}

// readApp reads the App of name in ns; without kapp-controller's API no
// App can exist.
func (r *Reconciler) readApp(ctx context.Context, ns, name string) (*kappctrlv1alpha1.App, error) {
	if !r.kapp.Ready() {
		return nil, nil
	}
	return kube.LiveApp(ctx, r.client, r.direct, client.ObjectKey{Namespace: ns, Name: name})
}
