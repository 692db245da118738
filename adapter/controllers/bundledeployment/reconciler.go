package bundledeployment

import (
	"context"
	"time"

	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/memo"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
)

// BundleDeploymentReconciler turns BundleDeployments of the claimed classes into Apps.
type BundleDeploymentReconciler struct {
	client   client.Client
	direct   client.Reader
	recorder events.EventRecorder
	set      Settings
	app      AppMode
	serve    ServeMode
	waits    DependencyWaits
	// bundles serves BundleDeployments of rukpak's first API; nil: they
	// are installed as v1alpha2 ones (WithBundles).
	bundles  Bundles
	placed   placement
	progress progressClock
	states   stateTracker
	health   healthTracker
	// written is what the last status write of each BundleDeployment
	// replaced, until the cache has the write.
	written memo.OwnWrites
	kapp    KappReady
	// custom reads the installed custom resources Healthy is judged by
	// alongside the workloads; nil: none are.
	custom *kube.CustomObjects
	// ctl is the controller SetupWithManager built; enqueue feeds it every
	// BundleDeployment once kapp-controller's API appears.
	ctl     controller.Controller
	enqueue chan event.GenericEvent
	now     func() time.Time
}

// New wires a BundleDeploymentReconciler. c reads from the informer cache; direct reads
// from the API server, where the cache may lag; recorder may be nil.
func New(c client.Client, direct client.Reader, recorder events.EventRecorder, set Settings, app AppMode, serve ServeMode, waits DependencyWaits, kapp KappReady,
	custom *kube.CustomObjects) *BundleDeploymentReconciler {
	return &BundleDeploymentReconciler{client: c, direct: direct, recorder: recorder, set: set, app: app, serve: serve, waits: waits, kapp: kapp, custom: custom,
		enqueue: make(chan event.GenericEvent), now: time.Now}
}

// Reconcile brings one BundleDeployment's App and status up to date in
// three phases: load reads (and writes nothing), run takes the route's
// steps in order, each returning an outcome, and report writes the status
// once, from what the steps found.
func (r *BundleDeploymentReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	l, err := r.load(ctx, req)
	switch {
	case err != nil || l == nil:
		return ctrl.Result{}, err
	case l.behind:
		// Acting on the status as it was before the last write would write
		// over it: look again with backoff (that write's update event
		// usually comes first).
		return ctrl.Result{Requeue: true}, nil
	case l.route == Skip:
		return ctrl.Result{}, nil
	}
	e := r.run(ctx, l)
	if !e.report {
		return e.result, scope.Redacted(e.err)
	}
	p := installing
	if l.route == Remove {
		p = removing
	}
	return r.report(ctx, l, e.o, p)
}
