package controller

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Reconciler turns BundleDeployments of the claimed classes into Apps.
type Reconciler struct {
	client   client.Client
	direct   client.Reader
	recorder events.EventRecorder
	set      Settings
	app      AppMode
	serve    ServeMode
	content  Content
	// bundles serves BundleDeployments of rukpak's first API; nil: they
	// are installed as v1alpha2 ones (WithBundles).
	bundles  Bundles
	placed   placement
	progress progressClock
	states   stateTracker
	kapp     KappReady
	// ctl is the controller SetupWithManager built; wakeAll feeds it every
	// BundleDeployment once kapp-controller's API appears.
	ctl     controller.Controller
	wakeAll chan event.GenericEvent
	now     func() time.Time
}

// New wires a Reconciler. c reads from the informer cache; direct reads
// from the API server, where the cache may lag; recorder may be nil.
func New(c client.Client, direct client.Reader, recorder events.EventRecorder, set Settings, app AppMode, serve ServeMode, content Content, kapp KappReady) *Reconciler {
	return &Reconciler{client: c, direct: direct, recorder: recorder, set: set, app: app, serve: serve, content: content, kapp: kapp,
		wakeAll: make(chan event.GenericEvent), now: time.Now}
}

// Reconcile brings one BundleDeployment's App and status up to date: load,
// place, route, run the route, report.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	bd := &rukpakv1alpha2.BundleDeployment{}
	if err := r.client.Get(ctx, req.NamespacedName, bd); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ns, err := r.placed.place(ctx, r.client, r.set.Config, bd.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	mode, modeErr := installWith(bd, r.set.InstallDefault)
	route := Decide(Facts{Claimed: r.set.Classes.Claims(bd), Deleting: !bd.DeletionTimestamp.IsZero(),
		HasFinalizer: controllerutil.ContainsFinalizer(bd, kube.Finalizer), Mode: mode, ModeInvalid: modeErr != nil})
	cfg := r.set.Config
	cfg.AppNamespace = ns
	s := &scope.Scope{BD: bd, View: bd, Mode: mode, AppNS: ns, Cfg: cfg, Now: r.now()}
	switch route {
	case Skip:
		return ctrl.Result{}, nil
	case HandBack:
		// Nothing is reported: the status is the new owner's to write.
		return ctrl.Result{}, scope.Redacted(r.handBack(ctx, s))
	case Remove:
		r.generate(ctx, s, false)
		gone, o := r.remove(ctx, s)
		if gone {
			return ctrl.Result{}, nil
		}
		return r.report(ctx, s, o, removing)
	}
	if err := kube.PatchFinalizers(ctx, r.client, bd, controllerutil.AddFinalizer); apierrors.IsConflict(err) {
		// Another writer was first; look again with backoff.
		return ctrl.Result{Requeue: true}, nil
	} else if err != nil {
		s.Facts = &status.Facts{BD: bd, Now: s.Now, SystemNamespace: s.Cfg.SystemNamespace}
		return r.report(ctx, s, scope.Outcome{Err: scope.InStep(scope.StepStore, "add finalizer: %w", err)}, installing)
	}
	// Taken after the finalizer patch, which updated bd.
	s.View = r.viewOf(bd)
	s.Facts = &status.Facts{BD: bd, Now: s.Now, TemplateTimeout: r.set.Config.TemplateTimeout, SystemNamespace: s.Cfg.SystemNamespace}
	if o, stop := r.generate(ctx, s, true); stop {
		return r.report(ctx, s, o, installing)
	}
	return r.report(ctx, s, r.install(ctx, s, route, modeErr), installing)
}
