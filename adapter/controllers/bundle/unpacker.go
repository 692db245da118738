package bundle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/contenturl"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/bundle/plan"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/memo"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
)

// Unpacker reconciles Bundles on their own.
type Unpacker struct {
	client   client.Client
	recorder events.EventRecorder
	source   *URLSource
	// address is where contentURLs point; empty: none is written.
	address string
	now     func() time.Time
	// pinned holds, for a Bundle whose fetch again failed (which cleared
	// its resolved source), the source it had been pinned to.
	pinned memo.Keyed[pinnedSource]
	// written is what the last status write of each Bundle replaced,
	// until the cache has the write.
	written memo.OwnWrites
	// fetches are the unpacks under way.
	fetches fetches
	// retries holds back the fetch of a Bundle that failed until its
	// backoff has passed.
	retries fetch.Backoff
	// queued feeds the controller Bundles to reconcile now.
	queued chan event.GenericEvent
}

type pinnedSource struct {
	uid types.UID
	src rukpakv1alpha1.BundleSource
}

// New unpacks through source, reading Bundles and writing their status
// with c (the manager's client); recorder may be nil.
func New(c client.Client, recorder events.EventRecorder, source *URLSource, address string) *Unpacker {
	return &Unpacker{client: c, recorder: recorder, source: source, address: address, now: time.Now, queued: make(chan event.GenericEvent),
		fetches: fetches{forget: source.store.Forget}}
}

// Reconcile brings one Bundle's status and stored content in line with its
// spec, in the BundleDeployment reconciler's three phases: load reads (and writes nothing),
// run takes the steps in order (rukpak's finalizer released, then the
// plan's step), and report writes the status once, from what they found.
// Failures are reported on the Bundle at once; the ones a retry can end
// are looked at again at their next attempt (fetch.Backoff), the others
// come back as terminal errors, which only a change of what the
// Bundle reads (a ConfigMap, a Secret, kapp-controller-config) or a restart
// looks at again: its spec never changes.
func (u *Unpacker) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	l, err := u.load(ctx, req)
	switch {
	case err != nil || l == nil:
		return ctrl.Result{}, err
	case l.gone:
		u.forget(req.Name)
		return ctrl.Result{}, nil
	case l.behind:
		// The cache has not seen the last status write: acting on the
		// status before it would write over it. Another look with backoff
		// (that write's update event usually comes first).
		return ctrl.Result{Requeue: true}, nil
	}
	e := u.run(ctx, l)
	if e.err != nil {
		if apierrors.IsConflict(e.err) {
			// Another writer was first; look again with backoff.
			return ctrl.Result{Requeue: true}, nil
		}
		return ctrl.Result{}, e.err
	}
	return u.report(ctx, l, e)
}

// loaded is what load read: the Bundle and the step the plan chose for
// it, never assigned again.
type loaded struct {
	// gone says the Bundle is deleted: what is remembered of it goes.
	gone bool
	// behind says the cache has not seen the last status write of the
	// Bundle yet: nothing runs.
	behind bool
	// b is the Bundle as read; the finalizer step leaves its new
	// resourceVersion on it.
	b *rukpakv1alpha1.Bundle
	// class is the built-in class the Bundle is unpacked as.
	class string
	// url is the contentURL the Bundle reports once unpacked.
	url string
	// kept names the content the status reports unpacked (Rest, Report).
	kept contenturl.Key
	step plan.Step
}

// load reads what one reconcile of the Bundle needs, and writes nothing:
// the Bundle, whether this replica holds the content its status reports,
// and the plan's step. nil: the Bundle is not the Bundle controller's
// (another class's, or a BundleDeployment's).
func (u *Unpacker) load(ctx context.Context, req ctrl.Request) (*loaded, error) {
	b := &rukpakv1alpha1.Bundle{}
	if err := u.client.Get(ctx, req.NamespacedName, b); err != nil {
		if apierrors.IsNotFound(err) {
			return &loaded{gone: true}, nil
		}
		return nil, fmt.Errorf("read the Bundle: %w", err)
	}
	if u.written.Behind(b.Name, b.ResourceVersion) {
		return &loaded{behind: true}, nil
	}
	class, claimed := u.source.classes[b.Spec.ProvisionerClassName]
	if !claimed || plan.Generated(b) {
		return nil, nil
	}
	l := &loaded{b: b, class: class, url: contenturl.For(u.address, contenturl.KindBundle, b.Name)}
	stored := false
	if plan.ReportsUnpacked(b) {
		l.kept = bundleKey(b.UID, class, *b.Status.ResolvedSource)
		stored, _ = u.source.store.Has(l.kept)
	}
	l.step = plan.Plan(b, stored, l.url)
	return l, nil
}

// ending is how a run ends: err (a step that failed before anything was
// learned: nothing is reported), or what to report.
type ending struct {
	// out is the status to write; nil: nothing to write.
	out *plan.Outcome
	// failure is the failed fetch out reports: it says when to look again.
	failure error
	// taken is the fetch whose result out reports: forgotten once the
	// status is written, so that a write refused is tried again with it.
	taken *fetchJob
	err   error
}

// run takes the steps in order: rukpak's finalizer released, then the
// plan's.
func (u *Unpacker) run(ctx context.Context, l *loaded) ending {
	b := l.b
	// rukpak v0.16's finalizer comes off every Bundle of a claimed class,
	// deleted or not: with rukpak gone it would hold the deletion forever.
	// The patch leaves the Bundle's new resourceVersion on b, which the
	// status write then carries.
	if err := kube.ReleaseBundleFromRukpak(ctx, u.client, b); err != nil {
		return ending{err: err}
	}
	step := l.step
	if step == plan.Rest || step == plan.Report {
		// The content is this replica's unpack's from now on: a request's
		// does not make it go. Dropped since load looked: fetched again.
		if !u.source.store.Pin(l.kept) {
			step = plan.Plan(b, false, l.url)
		}
	}
	switch step {
	case plan.Rest, plan.Deleting:
		return ending{}
	}
	log.FromContext(ctx).V(1).Info("unpacking", "step", step.String())
	if step == plan.Report {
		return ending{out: &plan.Outcome{Phase: plan.Unpacked, Resolved: b.Status.ResolvedSource, ContentURL: l.url}}
	}
	return u.unpack(ctx, l, step)
}

// unpack is the fetch step (Unpack or Refetch): it takes the result of the
// fetch under way, or starts one unless a failure is waiting out its
// backoff, and says what to report.
func (u *Unpacker) unpack(ctx context.Context, l *loaded, step plan.Step) ending {
	b := l.b
	var pinned *rukpakv1alpha1.BundleSource
	if p, ok := u.pinned.Load(b.Name); ok && p.uid == b.UID {
		pinned = &p.src
	}
	src := plan.Source(b, step, pinned)
	described := status.DescribeSource(plan.View(b, l.class, src, ""))
	input := inputOf(b, src)
	job := u.fetches.under(b, src)
	if job == nil {
		// A fetch that failed is not made again before its backoff has
		// passed, whatever queued the Bundle (the end of that fetch, a
		// status write): the failure it left is reported.
		if err := u.retries.Pending(b.Name, input, u.now()); err != nil {
			return fetchFailed(err, described)
		}
		read := b.DeepCopy()
		job = u.fetches.start(ctx, b, src, func(ctx context.Context) (*rukpakv1alpha1.BundleSource, error) {
			files, resolved, err := u.source.bundleFiles(ctx, read, l.class, src)
			if err != nil {
				return nil, err
			}
			// Stored within the fetch's slot: a fetch that ended holds no
			// content in memory while its Bundle waits for a worker, so
			// MaxFetches bounds the memory fetches hold.
			// A Bundle that goes or is replaced meanwhile has what is
			// stored here forgotten (fetches.abandon).
			if _, err := u.source.store.Put(bundleKey(read.UID, l.class, *resolved), files, true); err != nil {
				return nil, err
			}
			return resolved, nil
		})
	}
	if !job.wait(ctx, UnpackingAfter) {
		// The fetch goes on; its end queues the Bundle again.
		return ending{out: plan.Waiting(b, step, described)}
	}
	// The fetch's result is kept until its status is written: a write
	// refused (a conflict with a status the cache had not shown yet) is
	// tried again with it, not with a new fetch.
	resolved, err := job.resolved, job.err
	if err == nil {
		return ending{out: &plan.Outcome{Phase: plan.Unpacked, Resolved: resolved, ContentURL: l.url}, taken: job}
	}
	if step == plan.Refetch {
		u.pinned.Store(b.Name, pinnedSource{uid: b.UID, src: src})
	}
	// Remembered before the status write: a write refused reports it at
	// the next look, which fetches nothing before its backoff has passed.
	err = u.retries.Failed(b.Name, input, err, !scope.Permanent(err), u.now())
	u.fetches.finish(b.Name, job)
	return fetchFailed(err, described)
}

// fetchFailed reports a failed fetch (one just made, or one remembered
// whose backoff has not passed) of the source described.
func fetchFailed(err error, described string) ending {
	out := plan.FetchFailed(*scope.FailureOf(err), described)
	return ending{out: &out, failure: err}
}

// report writes the status e says, if it changes anything: the one place
// the Bundle controller writes a status, locked by the resourceVersion
// read (or left by the finalizer step), with its Event. Then it says when
// to look again: at a failure's next attempt, or, for a failure no retry
// can end, never (a terminal error: only a change of what the Bundle reads
// forgets it).
func (u *Unpacker) report(ctx context.Context, l *loaded, e ending) (ctrl.Result, error) {
	b := l.b
	if e.out != nil {
		st := plan.Status(b, *e.out, u.now())
		replaced := b.ResourceVersion
		err := kube.WriteBundleStatus(ctx, u.client, u.recorder, b, st)
		switch {
		case apierrors.IsConflict(err):
			// As the BundleDeployment reconciler does: a status read stale is not written
			// over; another look with backoff writes it afresh (a fetch's
			// result, or its failure, is kept for it), and nothing is
			// logged as an error.
			return ctrl.Result{Requeue: true}, nil
		case err != nil && e.failure != nil:
			return ctrl.Result{}, errors.Join(scope.Redacted(e.failure), err)
		case err != nil:
			return ctrl.Result{}, err
		}
		u.written.Wrote(b.Name, replaced, b.ResourceVersion)
	}
	if e.taken != nil {
		// Its outcome is said: the next unpack fetches afresh.
		u.fetches.finish(b.Name, e.taken)
		u.pinned.Delete(b.Name)
		u.retries.Forget(b.Name)
	}
	if e.failure == nil {
		return ctrl.Result{}, nil
	}
	if !e.out.Retrying {
		return ctrl.Result{}, reconcile.TerminalError(scope.Redacted(e.failure))
	}
	var later *fetch.RetryLater
	if errors.As(e.failure, &later) && !later.Remembered {
		log.FromContext(ctx).Error(scope.Redacted(e.failure), "unpack failed; retrying with backoff", "nextAttempt", e.out.NextAttempt.UTC().Format(time.RFC3339))
	}
	return ctrl.Result{RequeueAfter: max(e.out.NextAttempt.Sub(u.now()), time.Millisecond)}, nil
}

// forget drops what is remembered of a Bundle that is gone.
func (u *Unpacker) forget(name string) {
	u.pinned.Delete(name)
	u.written.Delete(name)
	u.retries.Forget(name)
	u.fetches.drop(name)
}

// inputOf is what a Bundle's fetch reads: a failure is remembered for it
// (a new Bundle of the name, or another pinned source, starts afresh).
func inputOf(b *rukpakv1alpha1.Bundle, src rukpakv1alpha1.BundleSource) string {
	// Its JSON: the source's fields are pointers, which %v would print as
	// addresses, new at every read.
	data, err := json.Marshal(src)
	if err != nil {
		return string(b.UID)
	}
	return string(b.UID) + "/" + string(data)
}

// UnpackingAfter is how long a reconcile waits for a fetch before it
// returns, and a first unpack then says Unpacking: most fetches take less
// and go from no status to their outcome in one write; a slow one shows
// within seconds that it was picked up, and holds no worker.
const UnpackingAfter = time.Second
