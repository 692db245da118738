package bundles

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

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/memo"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/pure/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/servers/contenturl"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/v1alpha1/bundles/plan"
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
	return &Unpacker{client: c, recorder: recorder, source: source, address: address, now: time.Now, queued: make(chan event.GenericEvent)}
}

// Reconcile brings one Bundle's status and stored content in line with its
// spec. Failures are reported on the Bundle at once; the ones a retry can
// end come back as errors (the queue backs off, up to five minutes), the
// others as terminal errors, which only a change of what the Bundle reads
// (a ConfigMap, a Secret, kapp-controller-config) or a restart looks at
// again: its spec never changes.
func (u *Unpacker) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	res, err := u.unpack(ctx, req)
	if apierrors.IsConflict(err) {
		// As the dispatcher does: a status read stale is not written over;
		// another look with backoff writes it afresh (a fetch's result is
		// kept for it), and nothing is logged as an error.
		return ctrl.Result{Requeue: true}, nil
	}
	return res, err
}

// unpack reads the Bundle, releases rukpak's finalizer, and takes the
// step its plan says: report, unpack or fetch again, then one status write.
func (u *Unpacker) unpack(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := &rukpakv1alpha1.Bundle{}
	if err := u.client.Get(ctx, req.NamespacedName, b); err != nil {
		if apierrors.IsNotFound(err) {
			u.pinned.Delete(req.Name)
			u.written.Delete(req.Name)
			u.retries.Forget(req.Name)
			u.fetches.drop(req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("read the Bundle: %w", err)
	}
	if u.written.Behind(b.Name, b.ResourceVersion) {
		// The cache has not seen the last status write: acting on the
		// status before it would write over it. Another look with backoff
		// (that write's update event usually comes first).
		return ctrl.Result{Requeue: true}, nil
	}
	class, claimed := u.source.classes[b.Spec.ProvisionerClassName]
	if !claimed || plan.Generated(b) {
		return ctrl.Result{}, nil
	}
	if err := kube.ReleaseBundleFromRukpak(ctx, u.client, b); err != nil {
		return ctrl.Result{}, err
	}
	if !b.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	url := contenturl.For(u.address, contenturl.KindBundle, b.Name)
	stored := false
	if plan.ReportsUnpacked(b) {
		stored = u.source.store.Pin(bundleKey(b.UID, class, *b.Status.ResolvedSource))
	}
	step := plan.Plan(b, stored, url)
	if step == plan.Rest {
		return ctrl.Result{}, nil
	}
	log.FromContext(ctx).V(1).Info("unpacking", "step", step.String())
	if step == plan.Report {
		return ctrl.Result{}, u.write(ctx, b, plan.Outcome{Phase: plan.Unpacked, Resolved: b.Status.ResolvedSource, ContentURL: url})
	}

	src := b.Spec.Source
	switch p, ok := u.pinned.Load(b.Name); {
	case step == plan.Refetch:
		src = *b.Status.ResolvedSource
	case ok && p.uid == b.UID:
		src = p.src
	}
	described := status.DescribeSource(plan.View(b, class, src, ""))
	input := inputOf(b, src)
	job := u.fetches.under(b, src)
	if job == nil {
		// A fetch that failed is not made again before its backoff has
		// passed, whatever queued the Bundle (the end of that fetch, a
		// status write): the failure it left is reported.
		if err := u.retries.Pending(b.Name, input, u.now()); err != nil {
			return u.failed(ctx, b, err, described)
		}
		read := b.DeepCopy()
		job = u.fetches.start(ctx, b, src, func(ctx context.Context) (map[string][]byte, *rukpakv1alpha1.BundleSource, error) {
			return u.source.bundleFiles(ctx, read, class, src)
		})
	}
	if !job.wait(ctx, UnpackingAfter) {
		// The fetch goes on; its end queues the Bundle again. A first
		// unpack says it runs (a retry after a failure keeps saying the
		// failure until it ends).
		if step == plan.Unpack && b.Status.Phase != rukpakv1alpha1.PhaseFailing && b.Status.Phase != rukpakv1alpha1.PhaseUnpacking {
			return ctrl.Result{}, u.write(ctx, b, plan.Outcome{Phase: plan.Unpacking, Source: described})
		}
		return ctrl.Result{}, nil
	}
	// The fetch's result is kept until its status is written: a write
	// refused (a conflict with a status the cache had not shown yet) is
	// tried again with it, not with a new fetch.
	files, resolved, err := job.files, job.resolved, job.err
	if err == nil {
		_, err = u.source.store.Put(bundleKey(b.UID, class, *resolved), files, true)
	}
	if err == nil {
		if err := u.write(ctx, b, plan.Outcome{Phase: plan.Unpacked, Resolved: resolved, ContentURL: url}); err != nil {
			return ctrl.Result{}, err
		}
		u.fetches.finish(b.Name, job)
		u.pinned.Delete(b.Name)
		u.retries.Forget(b.Name)
		return ctrl.Result{}, nil
	}
	if step == plan.Refetch {
		u.pinned.Store(b.Name, pinnedSource{uid: b.UID, src: src})
	}
	// Remembered before the status write: a write refused reports it at
	// the next look, which fetches nothing before its backoff has passed.
	err = u.retries.Failed(b.Name, input, err, !scope.Permanent(err), u.now())
	u.fetches.finish(b.Name, job)
	return u.failed(ctx, b, err, described)
}

// failed reports a failed fetch (one just made, or one remembered whose
// backoff has not passed) and says when to look again: at its next
// attempt, or, for a failure no retry can end, never (a terminal error:
// only a change of what the Bundle reads forgets it).
func (u *Unpacker) failed(ctx context.Context, b *rukpakv1alpha1.Bundle, err error, described string) (ctrl.Result, error) {
	out, retry := outcomeOf(err, described)
	out.NextAttempt = fetch.NextAttempt(err)
	if werr := u.write(ctx, b, out); werr != nil {
		return ctrl.Result{}, errors.Join(scope.Redacted(err), werr)
	}
	if !retry {
		return ctrl.Result{}, reconcile.TerminalError(scope.Redacted(err))
	}
	var later *fetch.RetryLater
	if errors.As(err, &later) && !later.Remembered {
		log.FromContext(ctx).Error(scope.Redacted(err), "unpack failed; retrying with backoff", "nextAttempt", out.NextAttempt.UTC().Format(time.RFC3339))
	}
	return ctrl.Result{RequeueAfter: max(out.NextAttempt.Sub(u.now()), time.Millisecond)}, nil
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

// outcomeOf classifies a failed unpack: which phase reports it, and
// whether trying again can help.
// The classes are the dispatcher's (scope.FailureOf): an upload source is
// a spec the adapter cannot serve; a full content store, a failure of its
// own, retried.
func outcomeOf(err error, source string) (plan.Outcome, bool) {
	f := scope.FailureOf(err)
	o := plan.Outcome{Source: source, Cause: f.Message, Retrying: f.Retrying}
	switch f.Kind {
	case status.SourceFailed, status.SpecUnsupported:
		o.Phase = plan.SourceFailed
	case status.BundleInvalid:
		o.Phase = plan.Invalid
	default:
		o.Phase = plan.Failed
	}
	return o, f.Retrying
}

func (u *Unpacker) write(ctx context.Context, b *rukpakv1alpha1.Bundle, o plan.Outcome) error {
	st := plan.Status(b, o, u.now())
	replaced := b.ResourceVersion
	if err := kube.WriteBundleStatus(ctx, u.client, u.recorder, b, st); err != nil {
		return err
	}
	u.written.Wrote(b.Name, replaced, b.ResourceVersion)
	b.Status = st
	return nil
}
