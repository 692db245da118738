// Package adapter reconciles BundleDeployments into kapp-controller Apps and
// mirrors the Apps' status back. The data path reads in the order of its
// packages: fetch (download a source the adapter fetches itself), bundle
// (lay the files out for the App), content (pack them into Secrets),
// translate (the App), and status (the BundleDeployment's conditions). This
// package is the glue that talks to the cluster.
package adapter

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundle"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// FieldOwner is the server-side apply field manager and event source.
const FieldOwner = "rukpak-kapp"

// Reconciler turns BundleDeployments of the claimed classes into Apps.
type Reconciler struct {
	client   client.Client
	direct   client.Reader
	cfg      translate.Config
	classes  Classes
	recorder events.EventRecorder
	cache    contentCache
	states   stateTracker
	progress progressClock
	placed   placement
	waiting  waitingSet
	apis     APIs
	digests  *fetch.DigestCache
	now      func() time.Time
	// serve is the serve mode's (packageinstall.go).
	serve serveState
}

// digestCacheBytes bounds the images kept unpacked in memory.
const digestCacheBytes = 32 << 20

// NewReconciler wires a Reconciler. c reads from the informer cache; direct
// reads from the API server, where the cache may lag. classes are the
// provisioner classes it claims; BundleDeployments of other classes are
// never touched. apis answers registry+v1 bundles' olm.gvk dependencies.
func NewReconciler(c client.Client, direct client.Reader, cfg translate.Config, classes Classes, recorder events.EventRecorder, apis APIs) *Reconciler {
	return &Reconciler{
		client: c, direct: direct, cfg: cfg, classes: classes, recorder: recorder, apis: apis,
		cache: newContentCache(), digests: fetch.NewDigestCache(digestCacheBytes), now: time.Now,
	}
}

// Reconcile brings one BundleDeployment's App and status up to date.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	bd := &rukpakv1alpha2.BundleDeployment{}
	if err := r.client.Get(ctx, req.NamespacedName, bd); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if _, err := r.place(ctx, bd.Name); err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case !r.classes.claims(bd):
		return ctrl.Result{}, redactedErr(r.release(ctx, bd))
	case !bd.DeletionTimestamp.IsZero():
		return ctrl.Result{}, redactedErr(r.finalize(ctx, bd))
	}
	if err := r.patchFinalizers(ctx, bd, controllerutil.AddFinalizer); apierrors.IsConflict(err) {
		// Another writer was first; look again with backoff.
		return ctrl.Result{Requeue: true}, nil
	} else if err != nil {
		return r.report(ctx, bd, &status.Facts{BD: bd, Now: r.now()}, 0, inStep(stepStore, "add finalizer: %w", err), nil)
	}
	facts := &status.Facts{BD: bd, Now: r.now(), TemplateTimeout: r.cfg.TemplateTimeout}
	timer, err, retry := r.installBy(ctx, r.classes.asBuiltin(bd), facts)
	return r.report(ctx, bd, facts, timer, err, retry)
}

// install runs the steps that bring the App up to date and gathers the
// facts of the status. err stops progress; retry is a failure beside a
// working install (prune, workloads) that is reported and retried.
func (r *Reconciler) install(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, facts *status.Facts) (timer time.Duration, err, retry error) {
	live, err := r.liveApp(ctx, bd.Name)
	if err != nil {
		return 0, inStep(stepStore, "%w", err), nil
	}
	if handled, err := r.takeOver(ctx, bd, live, facts); handled {
		return 0, err, nil
	}
	f, timer, stop, err := r.adapterContent(ctx, bd, facts)
	if stop {
		return timer, err, nil
	}
	// Apps made before as-bundled Apps existed keep label scoping: changing
	// an installed workload's selector fails, and its pod template rolls.
	desired, err := translate.AppInStyle(bd, r.appConfig(bd.Name), f.content(), translate.StyleOf(live))
	if err != nil {
		return 0, err, nil
	}
	if err := r.mirror(ctx, bd); err != nil {
		return 0, &stepError{step: stepStore, err: err}, nil
	}
	if facts.App, err = r.applyApp(ctx, desired, live); err != nil {
		return 0, err, nil
	}
	if deployedCurrent(facts.App) && facts.Failure == nil {
		if err := r.pruneContent(ctx, bd.Name, f.content()); err != nil {
			facts.PruneFailure, retry = err.Error(), err
		}
	}
	if err := r.observeWorkloads(ctx, bd, facts, deployedCurrent(facts.App)); err != nil {
		retry = err
	}
	return timer, nil, retry
}

// adapterContent fetches what the adapter fetches itself for bd (nothing
// for content kapp-controller fetches) and gathers its facts. stop says
// there is nothing to install now: a refusal, unmet dependencies or err.
func (r *Reconciler) adapterContent(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, facts *status.Facts) (f fetched, timer time.Duration, stop bool, err error) {
	if !bundle.AdapterFetches(bd) {
		return f, 0, false, nil
	}
	if f, err = r.content(ctx, bd); err != nil {
		return f, 0, true, err
	}
	timer = timerFor(bd, f, r.cfg.BranchSyncPeriod)
	if f.refused != nil {
		facts.Failure = failureOf(f.refused.err)
	}
	if f.secrets == nil {
		// Nothing to install: the refusal is the news.
		return f, timer, true, nil
	}
	facts.Fetched = f.resolved
	if f.bundle != nil {
		facts.Notes = f.bundle.Notes
	}
	if unmet, err := r.dependenciesOf(ctx, bd, f); err != nil || len(unmet) > 0 {
		if err == nil {
			facts.Failure = &status.Failure{Kind: status.DependenciesUnmet, Message: strings.Join(unmet, "; ")}
		}
		return f, timer, true, err
	}
	return f, timer, false, nil
}

// observeWorkloads lists the installed workloads into facts. Only an
// install can be made unhealthy by its workloads; other states skip the
// three cache lists. Its error is reported and retried beside the install.
func (r *Reconciler) observeWorkloads(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, facts *status.Facts, deployed bool) error {
	if !deployed && !apimeta.IsStatusConditionTrue(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled) {
		return nil
	}
	w, err := r.workloadsOf(ctx, bd)
	if err != nil {
		facts.WorkloadsFailure = err.Error()
	}
	facts.Workloads = &w
	return err
}

// dependenciesOf checks a registry+v1 bundle's dependencies before its
// content is installed; what is installed already is not judged again. A
// BundleDeployment that waits is woken by what it waits for.
func (r *Reconciler) dependenciesOf(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, f fetched) ([]string, error) {
	if f.bundle == nil || len(f.bundle.Dependencies) == 0 || bd.Annotations[rukpakv1alpha2.AnnotationSkipDependencyCheck] == "true" ||
		status.Current(bd, f.resolved) {
		r.waiting.set(bd.Name, false)
		return nil, nil
	}
	unmet, err := r.unmetDependencies(ctx, bd, f.bundle)
	if err != nil {
		return nil, &stepError{step: stepStore, err: fmt.Errorf("check dependencies: %w", err)}
	}
	r.waiting.set(bd.Name, len(unmet) > 0)
	return unmet, nil
}

// report computes the status from the facts and writes it, once: the only
// status write of a reconcile.
func (r *Reconciler) report(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, facts *status.Facts, timer time.Duration, err, retry error) (ctrl.Result, error) {
	if err != nil {
		facts.Failure = failureOf(err)
	}
	facts.ProgressSince = r.progress.seen(bd, facts.Now)
	out := status.Compute(*facts)
	after := earliest(timer, out.LookAgainAfter)
	if out.Hold {
		// The App's next status change wakes this up too; the timer only
		// covers a generation that stays in progress.
		after = earliest(after, out.WriteAfter)
	} else {
		r.progress.forget(bd.Name)
		if werr := r.writeStatus(ctx, bd, out.Status); werr != nil {
			return ctrl.Result{}, redactedErr(werr)
		}
	}
	switch {
	case err != nil && !facts.Failure.Retrying:
		// Only a new generation or new content can fix this.
		return ctrl.Result{}, reconcile.TerminalError(redactedErr(err))
	case err != nil:
		return ctrl.Result{}, redactedErr(err)
	case retry != nil:
		return ctrl.Result{}, redactedErr(retry)
	}
	return ctrl.Result{RequeueAfter: after}, nil
}

func redactedErr(err error) error {
	if err == nil {
		return nil
	}
	return redacted{err}
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
	if (f.secrets != nil || f.refused != nil) && translate.TracksBranch(bd) {
		after = branchPeriod
	}
	if !f.renewAt.IsZero() {
		after = earliest(after, time.Until(f.renewAt)+time.Minute)
	}
	return after
}
