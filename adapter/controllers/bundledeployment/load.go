package bundledeployment

import (
	"context"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/contenturl"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// loaded is what load read: the route and the Scope it runs on, filled
// before any step runs and never assigned again.
type loaded struct {
	// behind says the cache has not seen the adapter's last status write
	// of the BundleDeployment yet: nothing else is read, nothing runs.
	behind bool
	route  Route
	s      *scope.Scope
	// firstAPI says the BundleDeployment is one of rukpak's first API,
	// served through the Bundles seam.
	firstAPI bool
	// modeErr says why the install-with annotation names no mode
	// (InstallInvalid).
	modeErr error
	// readErr is a read that failed (the App, the generated Bundles): the
	// route does not run, and the failure is reported and retried.
	readErr error
	// write is how the status is written: at v1alpha2, or through the
	// Bundles seam for rukpak's first API.
	write statusWriter
}

// load reads what one reconcile of the BundleDeployment needs, and writes
// nothing: the BundleDeployment, where its App lives, the route, the facts
// the status is computed from and the writer of its status, the view, the
// live App and, for rukpak's first API, its generated Bundles (the one to
// make among them: the install's prepare step makes it). nil: the
// BundleDeployment is gone.
func (r *BundleDeploymentReconciler) load(ctx context.Context, req ctrl.Request) (*loaded, error) {
	bd := &rukpakv1alpha2.BundleDeployment{}
	if err := r.client.Get(ctx, req.NamespacedName, bd); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if r.written.Behind(bd.Name, bd.ResourceVersion) {
		return &loaded{behind: true}, nil
	}
	ns, err := r.placed.place(ctx, r.client, r.direct, r.set.Config, bd.Name, r.kapp.Ready())
	if err != nil {
		return nil, err
	}
	mode, modeErr := installWith(bd, r.set.InstallDefault)
	l := &loaded{modeErr: modeErr, write: r.writeV1alpha2, route: Decide(Situation{Claimed: r.set.Classes.Claims(bd), Deleting: !bd.DeletionTimestamp.IsZero(),
		HasFinalizer: controllerutil.ContainsFinalizer(bd, kube.Finalizer), Mode: mode, ModeInvalid: modeErr != nil})}
	if l.route == Skip {
		return l, nil
	}
	l.firstAPI = r.servesFirstAPI(bd)
	if l.firstAPI {
		l.write = r.bundles.Report
	}
	cfg := r.set.Config
	cfg.AppNamespace = ns
	now := r.now()
	facts := &status.Facts{BD: bd, Now: now, TemplateTimeout: cfg.TemplateTimeout, SystemNamespace: cfg.SystemNamespace,
		ContentURL: contenturl.For(cfg.ContentAddress, contenturl.KindBundleDeployment, bd.Name)}
	l.s = &scope.Scope{BD: bd, View: r.viewOf(bd, l.firstAPI), Mode: mode, AppNS: ns, Cfg: cfg, Now: now, Facts: facts}
	live, err := r.readApp(ctx, ns, bd.Name)
	if err != nil {
		l.readErr = err
		return l, nil
	}
	l.s.Live = live
	if l.route == Remove {
		// The removal's status tells of the App as read: a copy, which the
		// removal's own writes through Live leave as it was.
		facts.App = live.DeepCopy()
	}
	if l.route != HandBack && l.firstAPI {
		g, reported, err := r.bundles.Read(ctx, bd)
		l.s.Generated = g
		facts.BD = reported
		l.readErr = err
	}
	return l, nil
}

// readApp reads the App of name in ns; without kapp-controller's API no
// App can exist.
func (r *BundleDeploymentReconciler) readApp(ctx context.Context, ns, name string) (*kappctrlv1alpha1.App, error) {
	if !r.kapp.Ready() {
		return nil, nil
	}
	return kube.LiveApp(ctx, r.client, r.direct, client.ObjectKey{Namespace: ns, Name: name})
}
