package drift

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// coalesce is how long a change waits for others before the App is
// re-applied: a bundle deleted with one command is one re-apply.
const coalesce = 250 * time.Millisecond

// Repairer is the drift repair loop, run by the controller manager on the
// leader only.
type Repairer struct {
	client client.Client
	// api reads past the cache, after a conflict.
	api      client.Reader
	cache    cache.Cache
	meta     metadata.Interface
	recorder events.EventRecorder
	// appOf names the App of a BundleDeployment.
	appOf func(ctx context.Context, bd string) (client.ObjectKey, bool)
	now   func() time.Time

	kinds *kinds
	queue workqueue.TypedRateLimitingInterface[client.ObjectKey]
	mu    sync.Mutex
	apps  map[client.ObjectKey]*appState
}

// appState is what the Repairer knows of one App.
type appState struct {
	// pending is when the earliest change not yet repaired was seen, and
	// what it was.
	pending time.Time
	what    string
	deleted bool
	// underRun says the change was a delete of what the run under way had
	// just applied: the run may fail of it, so the re-apply is asked for at
	// once, to follow that run.
	underRun bool
	fight    fight
	// deployed identifies the spec kapp-controller last deployed: while a
	// different spec is being deployed, deletes are kapp's pruning.
	deployed uint64
	kinds    []schema.GroupKind
}

// New makes a Repairer. appOf finds the App that installs a
// BundleDeployment's objects.
func New(c client.Client, api client.Reader, ca cache.Cache, meta metadata.Interface, recorder events.EventRecorder,
	appOf func(ctx context.Context, bd string) (client.ObjectKey, bool)) *Repairer {
	return &Repairer{client: c, api: api, cache: ca, meta: meta, recorder: recorder, appOf: appOf, now: time.Now,
		apps: map[client.ObjectKey]*appState{}}
}

// NeedLeaderElection: re-applies are writes, the leader's alone.
func (w *Repairer) NeedLeaderElection() bool { return true }

// Start runs the watches and the re-apply loop until ctx ends.
func (w *Repairer) Start(ctx context.Context) error {
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithName("drift"))
	w.queue = newAppQueue("drift")
	defer w.queue.ShutDown()
	w.kinds = newKinds(ctx, w.meta, w.client.RESTMapper(), func(gk schema.GroupKind) toolscache.ResourceEventHandler {
		return toolscache.ResourceEventHandlerFuncs{
			UpdateFunc: func(old, cur any) { w.objectChanged(ctx, gk, old, cur) },
			DeleteFunc: func(obj any) { w.objectDeleted(ctx, gk, obj) },
		}
	})
	// The kinds bundles commonly hold are watched from the start, before any
	// App installs them: a kind's watch that started with the first App to
	// report it would miss what happened to its objects between kapp's
	// apply and that report.
	w.kinds.use(nil, startKinds())
	return followApps(ctx, w.cache, w.queue, "drift repair", toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.appChanged(obj) },
		UpdateFunc: func(_, obj any) { w.appChanged(obj) },
		DeleteFunc: func(obj any) { w.appGone(obj) },
	}, "re-apply after drift", w.repair)
}

// appChanged follows an App: the kinds it installed, the spec it last
// deployed, and whether a change waiting for it can be repaired now.
func (w *Repairer) appChanged(obj any) {
	app, ok := obj.(*kappctrlv1alpha1.App)
	if !ok {
		return
	}
	key := client.ObjectKeyFromObject(app)
	w.mu.Lock()
	st := w.state(key)
	before, after := st.kinds, installedKinds(app)
	st.kinds = after
	if succeeded(app) {
		st.deployed = specHash(app)
	}
	pending := !st.pending.IsZero() || canceledByUs(app)
	w.mu.Unlock()
	w.kinds.use(before, after)
	if pending {
		w.queue.Add(key)
	}
}

func (w *Repairer) appGone(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	app, ok := obj.(*kappctrlv1alpha1.App)
	if !ok {
		return
	}
	key := client.ObjectKeyFromObject(app)
	w.mu.Lock()
	st := w.apps[key]
	delete(w.apps, key)
	w.mu.Unlock()
	if st != nil {
		w.kinds.use(st.kinds, nil)
	}
}

// state is key's state, made on first use; w.mu is held.
func (w *Repairer) state(key client.ObjectKey) *appState {
	st, ok := w.apps[key]
	if !ok {
		st = &appState{}
		w.apps[key] = st
	}
	return st
}

func (w *Repairer) objectChanged(ctx context.Context, gk schema.GroupKind, old, cur any) {
	o, ok1 := old.(*metav1.PartialObjectMetadata)
	c, ok2 := cur.(*metav1.PartialObjectMetadata)
	if ok1 && ok2 && ChangedByOthers(o, c) {
		w.changed(ctx, gk, c, "changed")
	}
}

func (w *Repairer) objectDeleted(ctx context.Context, gk schema.GroupKind, obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		w.changed(ctx, gk, m, "deleted")
	}
}

// changed records a change of an installed object for its App's re-apply.
func (w *Repairer) changed(ctx context.Context, gk schema.GroupKind, m *metav1.PartialObjectMetadata, how string) {
	key, ok := w.appOf(ctx, m.Labels[ownerNameLabel])
	if !ok {
		return
	}
	app := &kappctrlv1alpha1.App{}
	if err := w.cache.Get(ctx, key, app); err != nil || !app.DeletionTimestamp.IsZero() {
		// The App and what it installed are going away.
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.state(key)
	underRun := false
	if how == "deleted" && st.deployed != specHash(app) {
		// A new spec is being deployed, and kapp prunes what it no longer
		// holds: what it applied before the spec changed. What it applied
		// since is the new spec's, which kapp never deletes.
		if !byThisRun(app, m) {
			prunes.Inc()
			log.FromContext(ctx).V(1).Info("installed object deleted while a new spec is deployed; left to kapp's prune", "app", key.String(), "object", gk.Kind+" "+objectName(m))
			return
		}
		underRun = true
	}
	if st.pending.IsZero() {
		st.pending = w.now()
		st.what = fmt.Sprintf("%s %s was %s", gk.Kind, objectName(m), how)
		st.deleted = how == "deleted"
		st.underRun = underRun
	}
	w.queue.AddAfter(key, coalesce)
}

// byThisRun says m, deleted while app's current spec is deployed, was
// applied by that deploy, so its delete is not kapp's prune: an App that
// never deployed has nothing kapp could prune; otherwise kapp wrote m after
// the spec changed (by the API server's clock, whole seconds: a write within
// the second of the change is taken for a prune, a repair left to the sync
// period rather than a false one).
func byThisRun(app *kappctrlv1alpha1.App, m *metav1.PartialObjectMetadata) bool {
	if d := app.Status.Deploy; d == nil || d.KappDeployStatus == nil {
		return true
	}
	changed := status.SpecWrittenAt(app)
	for _, f := range m.ManagedFields {
		if f.Manager == KappManager && f.Time != nil && f.Time.Time.After(changed) {
			return true
		}
	}
	return false
}

// repair re-applies key's App if a change waits and the App can take it.
func (w *Repairer) repair(ctx context.Context, key client.ObjectKey) error {
	app := &kappctrlv1alpha1.App{}
	if err := w.cache.Get(ctx, key, app); err != nil {
		return client.IgnoreNotFound(err)
	}
	if canceledByUs(app) {
		// An adapter stopped between kickCanceling's two writes.
		return uncancel(ctx, w.client, w.api, app)
	}
	w.mu.Lock()
	st := w.state(key)
	now := w.now()
	switch {
	case st.pending.IsZero():
		w.mu.Unlock()
		return nil
	case app.Spec.Paused || app.Spec.Canceled || !app.DeletionTimestamp.IsZero():
		// Paused by its user, or going away: not the adapter's to re-apply.
		st.pending = time.Time{}
		w.mu.Unlock()
		return nil
	case busy(app) && st.underRun && app.Status.ObservedGeneration == app.Generation:
		// Asked for now, with the run under way canceled: it cannot succeed
		// (kapp retries its write of what was deleted for a minute, then
		// fails), and the status computation does not report its failure
		// while the request waits.
	case busy(app) || failed(app):
		// The App's next status change brings this back: a run under way
		// ends in one, and kapp-controller retries a failure itself.
		w.mu.Unlock()
		return nil
	case covered(app, st.pending):
		// A deploy that began after the change has repaired it.
		st.pending = time.Time{}
		w.mu.Unlock()
		return nil
	}
	if wait := st.fight.wait(now); wait > 0 {
		w.mu.Unlock()
		w.queue.AddAfter(key, wait)
		return nil
	}
	what, deleted, underRun := st.what, st.deleted, st.underRun
	w.mu.Unlock()
	kickNow := func() error {
		if underRun && busy(app) && app.Status.ObservedGeneration == app.Generation {
			return kickCanceling(ctx, w.client, w.api, app)
		}
		return kick(ctx, w.client, app, status.RerunDrift)
	}
	err := kickNow()
	if apierrors.IsConflict(err) {
		// kapp-controller wrote the App's status since the cache saw it.
		if err = w.api.Get(ctx, key, app); err == nil && !app.Spec.Paused && !app.Spec.Canceled && app.DeletionTimestamp.IsZero() {
			err = kickNow()
		}
	}
	if err != nil {
		return err
	}
	w.mu.Lock()
	st.fight.kicked(now)
	st.pending, st.underRun = time.Time{}, false
	w.mu.Unlock()
	reapplies.Inc()
	log.FromContext(ctx).Info("installed object drifted; kapp-controller re-applies the App", "app", key.String(), "drift", what, "runCanceled", underRun)
	w.record(ctx, app, what, deleted)
	return nil
}

// record tells the BundleDeployment's user what was repaired.
// The Events API folds Events of one reason and action about one object
// into a series that keeps the first note, so deletes and changes get a
// reason each.
func (w *Repairer) record(ctx context.Context, app *kappctrlv1alpha1.App, what string, deleted bool) {
	bd := &rukpakv1alpha2.BundleDeployment{}
	if w.recorder == nil || w.cache.Get(ctx, client.ObjectKey{Name: app.Labels[ownerNameLabel]}, bd) != nil {
		return
	}
	reason := "InstalledObjectChanged"
	if deleted {
		reason = "InstalledObjectDeleted"
	}
	w.recorder.Eventf(bd, nil, corev1.EventTypeNormal, reason, "Reapply",
		"%s by someone other than kapp; kapp-controller re-applies the bundle", what)
}

// busy says kapp-controller has yet to finish a run of the App's spec.
func busy(app *kappctrlv1alpha1.App) bool {
	return app.Status.ObservedGeneration != app.Generation || len(app.Status.Conditions) == 0 ||
		app.Status.Conditions[0].Type == kappctrlv1alpha1.Reconciling
}

// succeeded says kapp-controller deployed the App's current spec.
func succeeded(app *kappctrlv1alpha1.App) bool {
	return !busy(app) && app.Status.Conditions[0].Type == kappctrlv1alpha1.ReconcileSucceeded
}

func failed(app *kappctrlv1alpha1.App) bool { return !busy(app) && !succeeded(app) }

// covered says the App's last deploy began after since. kapp-controller
// records whole seconds, so a deploy that began within the same second or
// the next does not count: one re-apply too many rather than one too few.
func covered(app *kappctrlv1alpha1.App, since time.Time) bool {
	d := app.Status.Deploy
	return d != nil && d.StartedAt.Time.After(since.Add(time.Second))
}

// installedKinds are the kinds kapp-controller says the App's last deploy
// used.
func installedKinds(app *kappctrlv1alpha1.App) []schema.GroupKind {
	d := app.Status.Deploy
	if d == nil || d.KappDeployStatus == nil {
		return nil
	}
	var out []schema.GroupKind
	for _, gk := range d.KappDeployStatus.AssociatedResources.GroupKinds {
		k := schema.GroupKind{Group: gk.Group, Kind: gk.Kind}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// specHash identifies what an App deploys; a re-apply request (spec.paused
// false or absent) does not change it.
func specHash(app *kappctrlv1alpha1.App) uint64 {
	spec := app.Spec.DeepCopy()
	spec.Paused = false
	data, _ := json.Marshal(spec)
	h := fnv.New64a()
	_, _ = h.Write(data)
	return h.Sum64()
}

func objectName(m *metav1.PartialObjectMetadata) string {
	if m.Namespace == "" {
		return m.Name
	}
	return m.Namespace + "/" + m.Name
}
