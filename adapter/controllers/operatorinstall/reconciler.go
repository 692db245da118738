package operatorinstall

import (
	"context"
	"fmt"
	"slices"
	"time"

	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/operatorinstall/plan"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/memo"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Finalizer holds an OperatorInstall until the BundleDeployment it wrote,
// and with it everything that installed, is gone.
const Finalizer = "catalogs.rukpak-kapp.dev/uninstall"

// Channels reads catalog Packages as a namespace sees them
// (packagingapi.Packages).
type Channels interface {
	Channel(ctx context.Context, ns, refName string) (packagingapi.Graph, error)
	Offers(ctx context.Context, ns string, pkgs []string) ([]catalog.Offer, error)
	Sees(ns string, o client.Object) bool
	InGlobal(o client.Object) bool
	Global() string
}

// StatusWriter writes an OperatorInstall's status as changed from before,
// locked by the resourceVersion read, with an Event for the transition of
// its conditions (kube.ConditionsWriter).
type StatusWriter func(ctx context.Context, obj, before client.Object, was, now []metav1.Condition) error

// Reconciler resolves, walks, holds and reports OperatorInstalls.
type Reconciler struct {
	client client.Client
	// installs reads OperatorInstalls (the catalog controllers' cache);
	// client's cache has BundleDeployments.
	installs client.Reader
	direct   client.Reader
	channels Channels
	deps     dependencies
	status   StatusWriter
	recorder events.EventRecorder
	// stepTimeout is --upgrade-step-health-timeout.
	stepTimeout time.Duration
	// written is what the last status write of each install replaced,
	// until the cache has the write.
	written memo.OwnWrites
	notices noticeGauge
	// ctl is the controller SetupWithManager built; enqueue feeds it every
	// install once the catalog Packages can be read.
	ctl     controller.Controller
	enqueue chan event.GenericEvent
	now     func() time.Time
}

// New wires a Reconciler: c writes and reads BundleDeployments (the
// manager's cache), installs reads OperatorInstalls, direct reads the API
// server (a PackageInstall's pick, what dependencies need), channels the
// catalog Packages, cluster checks requirements against the cluster;
// recorder may be nil.
func New(c client.Client, installs, direct client.Reader, channels Channels, cluster Cluster, status StatusWriter, recorder events.EventRecorder, stepTimeout time.Duration) *Reconciler {
	return &Reconciler{client: c, installs: installs, direct: direct, channels: channels, status: status, recorder: recorder, stepTimeout: stepTimeout,
		deps:    dependencies{cluster: cluster, channels: channels, direct: direct, installs: installs, writer: c},
		notices: noticeGauge{upgradeAvailable}, enqueue: make(chan event.GenericEvent), now: time.Now}
}

// Reconcile reads the install, its BundleDeployment and its channel, plans
// (package plan), meets the target's dependencies, writes what runs to the
// status before the BundleDeployment moves, writes the BundleDeployment,
// then the status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	oi := &catalogsv1alpha1.OperatorInstall{}
	if err := r.installs.Get(ctx, req.NamespacedName, oi); err != nil {
		if apierrors.IsNotFound(err) {
			r.notices.forget(req.Namespace, req.Name)
			r.written.Delete(req.String())
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if r.written.Behind(req.String(), oi.ResourceVersion) {
		// The cache has not seen the last status write: acting on the
		// status before it would move from what ran before.
		return ctrl.Result{Requeue: true}, nil
	}
	bd, err := r.bundleDeployment(ctx, oi)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !oi.DeletionTimestamp.IsZero() {
		return r.remove(ctx, oi, bd)
	}
	if err := r.patchFinalizer(ctx, oi, controllerutil.AddFinalizer); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	now := r.now()
	f := plan.Facts{Install: oi, StepTimeout: r.stepTimeout, Now: now}
	switch plan.OwnerOf(oi, bd) {
	case plan.Foreign:
		f.BD = nil
		return r.report(ctx, f, plan.Plan{}, plan.Outcome{Conflict: plan.ForeignMessage(oi, bd)}, 0)
	case plan.Adoptable:
		if bd, err = r.adopt(ctx, oi, bd); err != nil || bd == nil {
			return ctrl.Result{Requeue: bd == nil}, err
		}
		f.BD = bd
	case plan.Owned:
		f.BD = bd
	}
	g, err := r.channels.Channel(ctx, oi.Namespace, oi.Spec.RefName)
	f.Channel, f.Retracted, f.ChannelErr = g.Nodes, g.Retracted, err
	if err == nil && g.Unreadable != nil {
		log.FromContext(ctx).Info("some of the channel's Packages name no image they install", "error", g.Unreadable.Error())
	}
	if err == nil && !published(g, oi.Spec.Bundle) {
		f.Picked = r.picked(ctx, oi)
	}
	p := plan.Decide(f)
	var o plan.Outcome
	var depsErr error
	if p.Target != nil && p.Moves && (oi.Spec.InstallDependencies == nil || *oi.Spec.InstallDependencies) {
		o.Deps, depsErr = r.deps.meet(ctx, oi, *p.Target)
		if depsErr != nil {
			o.Deps.Installing = "the adapter retries: " + depsErr.Error()
		}
	}
	if p.Target == nil || p.Moves && o.Deps.Blocks() {
		res, err := r.report(ctx, f, p, o, r.lookAgain(f, p, o))
		if err == nil && depsErr != nil {
			// Said, and retried with the controller's backoff.
			err = depsErr
		}
		return res, err
	}
	if p.Moves {
		// What runs is recorded before the BundleDeployment moves on: a
		// restart between the two writes reads the same.
		if done, err := r.writeStatus(ctx, oi, plan.Status(f, p, o)); err != nil || !done {
			return ctrl.Result{Requeue: !done}, err
		}
	}
	if err := r.apply(ctx, oi, f.BD, *p.Target); err != nil {
		return ctrl.Result{}, err
	}
	if p.Moves {
		r.recordStep(oi, p)
		return ctrl.Result{RequeueAfter: r.lookAgain(f, p, o)}, nil
	}
	return r.report(ctx, f, p, o, r.lookAgain(f, p, o))
}

// published says the channel publishes bundle (or keeps it retracted).
func published(g packagingapi.Graph, bundle string) bool {
	if _, ok := g.Retracted[bundle]; ok {
		return true
	}
	return slices.ContainsFunc(g.Nodes, func(n catalog.Node) bool { return n.Entry.Bundle == bundle })
}

// picked is the version kapp-controller picks now for oi's PackageInstall
// ("" unknown): its status.version, set before kapp-controller renders
// (or refuses to render, as a downgrade from its last attempt) that pick.
func (r *Reconciler) picked(ctx context.Context, oi *catalogsv1alpha1.OperatorInstall) string {
	pi := &packagingv1alpha1.PackageInstall{}
	if err := r.direct.Get(ctx, client.ObjectKeyFromObject(oi), pi); err != nil {
		log.FromContext(ctx).V(1).Info("the PackageInstall's pick is not known", "error", err.Error())
		return ""
	}
	return pi.Status.Version
}

// report writes the status computed from f, p and o, and looks again
// after lookAgain (0: when something it watches changes).
func (r *Reconciler) report(ctx context.Context, f plan.Facts, p plan.Plan, o plan.Outcome, lookAgain time.Duration) (ctrl.Result, error) {
	before := f.Install.Status.DeepCopy()
	done, err := r.writeStatus(ctx, f.Install, plan.Status(f, p, o))
	if err != nil || !done {
		return ctrl.Result{Requeue: !done}, err
	}
	r.announce(ctx, f.Install, before)
	return ctrl.Result{RequeueAfter: lookAgain}, nil
}

// writeStatus writes st when it differs from what is stored; done is false
// when another writer was first (the caller looks again).
func (r *Reconciler) writeStatus(ctx context.Context, oi *catalogsv1alpha1.OperatorInstall, st catalogsv1alpha1.OperatorInstallStatus) (done bool, err error) {
	if apiequality.Semantic.DeepEqual(oi.Status, st) {
		return true, nil
	}
	before := oi.DeepCopy()
	oi.Status = st
	replaced := oi.ResourceVersion
	switch err := r.status(ctx, oi, before, before.Status.Conditions, st.Conditions); {
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("write the status of OperatorInstall %s/%s: %w", oi.Namespace, oi.Name, err)
	}
	r.written.Wrote(oi.Namespace+"/"+oi.Name, replaced, oi.ResourceVersion)
	return true, nil
}

// lookAgain is when the install needs a look no event brings: a gate's
// bound, a wait for dependencies (what the namespace lacks to allow it, an
// API or a package another install brings, changes without an event of
// this controller's: after 10 s, then as long as the wait has lasted, up
// to 10 minutes; a requirement no Package meets waits for a Package's
// event alone), or kapp-controller's next pick (after a second, then as
// long as the wait has lasted, up to a minute; a minute while an earlier
// generation runs).
func (r *Reconciler) lookAgain(f plan.Facts, p plan.Plan, o plan.Outcome) time.Duration {
	after := p.LookAgain
	// since is how long the install has waited: the look after that long
	// doubles the wait, from the stored condition (no memory a restart
	// would lose).
	since := func() time.Duration {
		c := apimeta.FindStatusCondition(f.Install.Status.Conditions, catalogsv1alpha1.TypeInstalled)
		if c == nil || c.Status == metav1.ConditionTrue {
			// Installed says what runs, not how long this wait has been.
			return 0
		}
		return f.Now.Sub(c.LastTransitionTime.Time)
	}
	soonest := func(d time.Duration) {
		if after == 0 || d < after {
			after = d
		}
	}
	switch {
	case o.Deps.Refused:
		// Only a Package's event (installsSeeing) can meet it.
	case o.Deps.Installing != "" || o.Deps.Unmet != "":
		// A ServiceAccount, a RoleBinding or a PackageInstall of no
		// OperatorInstall has no event the adapter watches.
		soonest(min(max(since(), 10*time.Second), 10*time.Minute))
	case p.Waiting != "" && p.WaitingReason == catalogsv1alpha1.ReasonInstalling:
		// While an earlier generation runs, Installed says nothing of how
		// long the pick has been awaited: the Package's event, or the
		// spec kapp-controller writes with another pick, brings the look,
		// and the timer is the longest wait, not a poll each second.
		if c := apimeta.FindStatusCondition(f.Install.Status.Conditions, catalogsv1alpha1.TypeInstalled); c != nil && c.Status == metav1.ConditionTrue {
			soonest(time.Minute)
			break
		}
		soonest(min(max(since(), time.Second), time.Minute))
	}
	return after
}

// bundleDeployment is the BundleDeployment of oi's name; nil when there is
// none.
func (r *Reconciler) bundleDeployment(ctx context.Context, oi *catalogsv1alpha1.OperatorInstall) (*rukpakv1alpha2.BundleDeployment, error) {
	bd := &rukpakv1alpha2.BundleDeployment{}
	err := r.client.Get(ctx, client.ObjectKey{Name: plan.BundleDeploymentName(oi)}, bd)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read BundleDeployment %s: %w", plan.BundleDeploymentName(oi), err)
	}
	return bd, nil
}

// apply writes the BundleDeployment that installs step, when what the
// cache has differs from it.
func (r *Reconciler) apply(ctx context.Context, oi *catalogsv1alpha1.OperatorInstall, live *rukpakv1alpha2.BundleDeployment, step plan.Step) error {
	desired := plan.BundleDeployment(oi, step)
	if live != nil && upToDate(desired, live) {
		return nil
	}
	if err := kube.ApplyAs(ctx, r.client, desired, &rukpakv1alpha2.BundleDeployment{}); err != nil {
		return fmt.Errorf("apply BundleDeployment %s: %w", desired.Name, err)
	}
	return nil
}

func upToDate(desired, live *rukpakv1alpha2.BundleDeployment) bool {
	if !kube.HasMetadataOf(live, desired) {
		return false
	}
	for _, k := range []string{rukpakv1alpha2.AnnotationHealthExpressions, rukpakv1alpha2.AnnotationServiceAccount} {
		if _, set := desired.Annotations[k]; !set && live.Annotations[k] != "" {
			return false
		}
	}
	return apiequality.Semantic.DeepEqual(desired.Spec, live.Spec)
}

// adopt takes bd, which a catalog Package's template rendered for oi's
// PackageInstall, into oi's hands in place: kapp's labels and the copied
// values off, the install named; nothing it installed restarts. nil, nil:
// another writer was first, look again.
func (r *Reconciler) adopt(ctx context.Context, oi *catalogsv1alpha1.OperatorInstall, bd *rukpakv1alpha2.BundleDeployment) (*rukpakv1alpha2.BundleDeployment, error) {
	adopted := bd.DeepCopy()
	err := r.client.Patch(ctx, adopted, client.RawPatch(types.MergePatchType, plan.Adoption(oi, bd)), client.FieldOwner(fieldowner.Name))
	switch {
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("adopt BundleDeployment %s, which a catalog Package's template made: %w", bd.Name, err)
	}
	log.FromContext(ctx).Info("adopted the BundleDeployment a catalog Package's template made", "bundleDeployment", bd.Name)
	return adopted, nil
}

// remove deletes the BundleDeployment oi wrote, unless the delete orphans
// it (the garbage collector's orphan finalizer), and lets oi go once it is
// gone.
func (r *Reconciler) remove(ctx context.Context, oi *catalogsv1alpha1.OperatorInstall, bd *rukpakv1alpha2.BundleDeployment) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(oi, Finalizer) {
		return ctrl.Result{}, nil
	}
	owner := plan.OwnerOf(oi, bd)
	if (owner == plan.Owned || owner == plan.Adoptable) && !controllerutil.ContainsFinalizer(oi, metav1.FinalizerOrphanDependents) {
		if bd.DeletionTimestamp.IsZero() {
			if err := r.client.Delete(ctx, bd, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &bd.UID}); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, fmt.Errorf("delete BundleDeployment %s: %w", bd.Name, err)
			}
		}
		// The BundleDeployment's deletion event brings the next look.
		_, err := r.report(ctx, plan.Facts{Install: oi, BD: bd, Now: r.now()}, plan.Plan{}, plan.Outcome{Deleting: true}, 0)
		return ctrl.Result{}, err
	}
	r.notices.forget(oi.Namespace, oi.Name)
	return ctrl.Result{}, client.IgnoreNotFound(r.patchFinalizer(ctx, oi, controllerutil.RemoveFinalizer))
}

// patchFinalizer changes oi's finalizers with an optimistic lock.
func (r *Reconciler) patchFinalizer(ctx context.Context, oi *catalogsv1alpha1.OperatorInstall, change func(client.Object, string) bool) error {
	before := oi.DeepCopy()
	if !change(oi, Finalizer) {
		return nil
	}
	return r.client.Patch(ctx, oi, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), client.FieldOwner(fieldowner.Name))
}

// ReasonUpgradeStep is the reason of the Event a walk records for each
// step it starts.
const ReasonUpgradeStep = "UpgradeStep"

// recordStep records the start of a walk's step. The Event regards the
// OperatorInstall without its resourceVersion and relates to the step's
// Package, so the same step recorded again adds to that step's Event
// series instead of making another, and each step has its own Event.
func (r *Reconciler) recordStep(oi *catalogsv1alpha1.OperatorInstall, p plan.Plan) {
	w := p.Walk
	if w == nil || r.recorder == nil || w.Step == 0 {
		return
	}
	regarding := oi.DeepCopy()
	regarding.ResourceVersion = ""
	regarding.SetGroupVersionKind(catalogsv1alpha1.GroupVersion.WithKind("OperatorInstall"))
	related := &datav1alpha1.Package{TypeMeta: metav1.TypeMeta{APIVersion: datav1alpha1.SchemeGroupVersion.String(), Kind: "Package"},
		ObjectMeta: metav1.ObjectMeta{Namespace: oi.Namespace, Name: catalog.PackageOf(p.Target.Entry)}}
	r.recorder.Eventf(regarding, related, corev1.EventTypeNormal, ReasonUpgradeStep, "Upgrade", "%s", w.StepNote())
}
