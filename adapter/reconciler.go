// Package adapter reconciles BundleDeployments into kapp-controller Apps and
// mirrors the Apps' status back. The decisions live in the pure packages
// translate and status; this package is the glue that talks to the cluster.
package adapter

import (
	"context"
	"errors"
	"fmt"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// FieldOwner is the server-side apply field manager and event source.
const FieldOwner = "rukpak-kapp"

// Finalizer holds a BundleDeployment until its App, and with it everything
// it installed, is gone.
const Finalizer = "core.rukpak.io/uninstall"

// Reconciler turns BundleDeployments of the claimed classes into Apps.
type Reconciler struct {
	client   client.Client
	cfg      translate.Config
	classes  Classes
	recorder events.EventRecorder
	cache    contentCache
	states   stateTracker
	progress progressHold
	digests  *fetch.DigestCache
}

// digestCacheBytes bounds the images kept unpacked in memory.
const digestCacheBytes = 32 << 20

// NewReconciler wires a Reconciler. classes are the provisioner classes it
// claims; BundleDeployments of other classes are never touched.
func NewReconciler(c client.Client, cfg translate.Config, classes Classes, recorder events.EventRecorder) *Reconciler {
	return &Reconciler{client: c, cfg: cfg, classes: classes, recorder: recorder, digests: fetch.NewDigestCache(digestCacheBytes)}
}

// Reconcile brings one BundleDeployment's App and status up to date.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	bd := &rukpakv1alpha2.BundleDeployment{}
	if err := r.client.Get(ctx, req.NamespacedName, bd); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !r.classes.claims(bd) {
		return ctrl.Result{}, nil
	}
	if !bd.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, bd)
	}
	if !controllerutil.ContainsFinalizer(bd, Finalizer) {
		before := bd.DeepCopy()
		controllerutil.AddFinalizer(bd, Finalizer)
		if err := r.client.Patch(ctx, bd, client.MergeFrom(before), client.FieldOwner(FieldOwner)); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer: %w", err)
		}
	}
	bd = r.classes.asBuiltin(bd)

	var f fetched
	if translate.AdapterFetches(bd) {
		var err error
		if f, err = r.fetchContent(ctx, bd); err != nil {
			return r.fetchFailed(ctx, bd, err)
		}
	}

	desired, err := translate.App(bd, r.cfg, f.refs())
	var unsupported *translate.UnsupportedError
	if errors.As(err, &unsupported) {
		if serr := r.writeStatus(ctx, bd, status.FromUnsupported(bd, err)); serr != nil {
			return ctrl.Result{}, serr
		}
		// Only a new generation can fix this; retrying would not help.
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("translate bundle deployment: %w", err)
	}

	app, err := r.applyApp(ctx, desired)
	if err != nil {
		return ctrl.Result{}, err
	}
	if deployedCurrent(app) {
		if err := r.pruneContent(ctx, bd, f.refs()); err != nil {
			return ctrl.Result{}, err
		}
	}
	res := status.FromApp(bd, app, f.resolved)
	if res.Healthy.Status == metav1.ConditionTrue {
		// Only a healthy install can be made unhealthy by its workloads;
		// other states skip the three cache lists.
		workloads, err := r.workloadsOf(ctx, bd)
		if err != nil {
			return ctrl.Result{}, err
		}
		res = status.WithWorkloads(res, workloads)
	}
	now := time.Now()
	res, deadline := status.WithTemplateDeadline(res, app, now, r.cfg.TemplateTimeout)
	timer := earliest(timerFor(bd, f, r.cfg.BranchSyncPeriod), deadline)
	if wait, after := r.progress.hold(bd, res, now); wait {
		// The App's next status change wakes this up too; the timer only
		// covers a spec that stays in progress.
		return ctrl.Result{RequeueAfter: earliest(timer, after)}, nil
	}
	if err := r.writeStatus(ctx, bd, res); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: timer}, nil
}

// fetchFailed reports a failed adapter-side fetch. Content that can never
// install is permanent until the spec changes; anything else (network,
// registry, API errors) is retried with backoff.
func (r *Reconciler) fetchFailed(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, err error) (ctrl.Result, error) {
	var invalid *translate.InvalidBundleError
	res := status.FromFetchError(bd, err)
	if errors.As(err, &invalid) {
		res = status.FromInvalidBundle(bd, err)
	}
	if serr := r.writeStatus(ctx, bd, res); serr != nil {
		return ctrl.Result{}, serr
	}
	if errors.As(err, &invalid) || errors.Is(err, fetch.ErrInvalidContent) {
		return ctrl.Result{}, reconcile.TerminalError(err)
	}
	return ctrl.Result{}, fmt.Errorf("fetch bundle content: %w", err)
}

// deployedCurrent reports whether kapp-controller deployed the App's
// current spec, so content it no longer reads can go.
func deployedCurrent(app *kappctrlv1alpha1.App) bool {
	return app.Status.ObservedGeneration == app.Generation && len(app.Status.Conditions) > 0 &&
		app.Status.Conditions[0].Type == kappctrlv1alpha1.ReconcileSucceeded
}

// applyApp writes the desired App only when it differs from the live one,
// so an unchanged BundleDeployment costs no API writes.
func (r *Reconciler) applyApp(ctx context.Context, desired *kappctrlv1alpha1.App) (*kappctrlv1alpha1.App, error) {
	live := &kappctrlv1alpha1.App{}
	err := r.client.Get(ctx, client.ObjectKeyFromObject(desired), live)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("get app %s/%s: %w", desired.Namespace, desired.Name, err)
	case appUpToDate(desired, live):
		return live, nil
	}
	applied, err := serverSideApply(ctx, r.client, desired)
	if err != nil {
		return nil, fmt.Errorf("apply app %s/%s: %w", desired.Namespace, desired.Name, err)
	}
	return applied, nil
}

func appUpToDate(desired, live *kappctrlv1alpha1.App) bool {
	for k, v := range desired.Labels {
		if live.Labels[k] != v {
			return false
		}
	}
	return live.DeletionTimestamp.IsZero() &&
		apiequality.Semantic.DeepEqual(desired.OwnerReferences, live.OwnerReferences) &&
		apiequality.Semantic.DeepEqual(desired.Spec, live.Spec)
}

// finalize deletes the App and waits, through the App watch, until
// kapp-controller has removed everything it installed.
func (r *Reconciler) finalize(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) error {
	if !controllerutil.ContainsFinalizer(bd, Finalizer) {
		return nil
	}
	app := &kappctrlv1alpha1.App{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: r.cfg.SystemNamespace, Name: bd.Name}, app)
	if apierrors.IsNotFound(err) {
		r.cache.forget(bd.UID)
		r.states.forget(bd.Name)
		r.progress.forget(bd.Name)
		before := bd.DeepCopy()
		controllerutil.RemoveFinalizer(bd, Finalizer)
		// NotFound: a second reconcile from a stale cache raced the first.
		if err := r.client.Patch(ctx, bd, client.MergeFrom(before), client.FieldOwner(FieldOwner)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("remove finalizer: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get app %s/%s: %w", r.cfg.SystemNamespace, bd.Name, err)
	}
	if app.DeletionTimestamp.IsZero() {
		if err := r.client.Delete(ctx, app); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete app %s/%s: %w", app.Namespace, app.Name, err)
		}
	}
	return r.writeStatus(ctx, bd, status.FromApp(bd, app, nil))
}

// earliest is the sooner of two RequeueAfter values, where 0 means never.
func earliest(a, b time.Duration) time.Duration {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

// timerFor is when a BD needs looking at without any event: a tracked branch
// may have moved, or a webhook certificate is due for renewal. Zero: never.
func timerFor(bd *rukpakv1alpha2.BundleDeployment, f fetched, branchPeriod time.Duration) time.Duration {
	var after time.Duration
	if f.chunks != nil && translate.TracksBranch(bd) {
		after = branchPeriod
	}
	if !f.renewAt.IsZero() {
		if due := time.Until(f.renewAt) + time.Minute; after == 0 || due < after {
			after = due
		}
	}
	return after
}
