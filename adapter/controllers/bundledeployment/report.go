package bundledeployment

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// policy is how a route's outcome is reported.
type policy int

const (
	// installing: a failure comes from the error, progress is held back
	// (status.Compute's hold), a failure no retry can fix is terminal, and
	// the timers of the content and the status bring the BundleDeployment
	// back.
	installing policy = iota
	// removing: never held, never terminal; written when the step did not
	// fail, else retried with backoff and written once it gets further.
	removing
)

// decision is what report does with a computed status.
type decision struct {
	write  bool
	result ctrl.Result
	err    error
	// failed is a failed attempt to log, where err does not carry it to
	// controller-runtime's log (a fetch retried at its own time).
	failed error
}

// decide is the report policy p applied to the computed status out, the
// route's outcome o and the failure classified from it, at now.
func decide(p policy, out status.Computed, o scope.Outcome, failure *status.Failure, now time.Time) decision {
	if p == removing {
		if o.Err != nil {
			return decision{err: scope.Redacted(o.Err)}
		}
		return decision{write: true}
	}
	d := decision{write: !out.Hold}
	after := scope.Earliest(o.Timer, out.LookAgainAfter)
	if out.Hold {
		// The App's next status change wakes this up too; the timer only
		// covers a generation that stays in progress.
		after = scope.Earliest(after, out.WriteAfter)
	}
	switch {
	case o.Err != nil && !failure.Retrying:
		// Only a new generation or new content can fix this.
		d.err = reconcile.TerminalError(scope.Redacted(o.Err))
	case o.Err != nil && !failure.NextAttempt.IsZero():
		// A fetch that failed is tried again when its backoff says, which
		// the status names; no look before then fetches (fetch.Backoff).
		// Not an error, whose requeue would come at the queue's own time.
		d.result = ctrl.Result{RequeueAfter: max(failure.NextAttempt.Sub(now), time.Millisecond)}
		var later *fetch.RetryLater
		if errors.As(o.Err, &later) && !later.Remembered {
			d.failed = scope.Redacted(o.Err)
		}
	case o.Err != nil:
		d.err = scope.Redacted(o.Err)
	case o.Retry != nil:
		d.err = scope.Redacted(o.Retry)
	default:
		d.result = ctrl.Result{RequeueAfter: after}
	}
	return d
}

// report computes the status from the scope's facts and writes it
// (writeStatus): every status the adapter writes for a BundleDeployment
// goes through here.
func (r *BundleDeploymentReconciler) report(ctx context.Context, l *loaded, o scope.Outcome, p policy) (ctrl.Result, error) {
	s := l.s
	// A copy: what load and the steps gathered stays as they left it.
	facts := *s.Facts
	if p == installing {
		switch {
		case o.Err != nil:
			facts.Failure = scope.FailureOf(o.Err)
		case o.Failure != nil:
			facts.Failure = o.Failure
		}
		facts.Progress = r.progress.held(s.BD)
	}
	out := status.Compute(facts)
	if out.Health != nil {
		r.health.set(s.BD, *out.Health, r.recorder)
	}
	d := decide(p, out, o, facts.Failure, r.now())
	replaced := s.BD.ResourceVersion
	wrote, installed, err := l.write(ctx, s, facts, out, d.write, p == installing)
	switch {
	case apierrors.IsConflict(err):
		// The status was read stale (the cache behind a newer write): it is
		// not written over; another look with backoff computes it afresh.
		return ctrl.Result{Requeue: true}, nil
	case err != nil:
		return ctrl.Result{}, scope.Redacted(err)
	}
	if p == installing {
		// Only once the status is written or held: a refused write leaves
		// the memory as the look before left it.
		r.progress.keep(s.BD, out.Progress)
	}
	r.written.Wrote(s.BD.Name, replaced, s.BD.ResourceVersion)
	if wrote {
		if installed != nil {
			r.states.set(s.BD.Name, string(installed.Status), installed.Reason)
		}
	}
	if d.failed != nil {
		log.FromContext(ctx).Error(d.failed, "fetch failed; retrying with backoff", "nextAttempt", facts.Failure.NextAttempt.UTC().Format(time.RFC3339))
	}
	return d.result, d.err
}

// statusWriter writes the computed status out when write says so, or when
// what it writes cannot wait; wrote and installed say what was written,
// for the BundleDeployment reconciler's memories. load chooses it: writeV1alpha2, or
// Bundles.Report for rukpak's first API (its own statuses, mapped from
// out, and its Bundle's).
type statusWriter func(ctx context.Context, s *scope.Scope, facts status.Facts, out status.Computed, write, installing bool) (wrote bool, installed *metav1.Condition, err error)

// writeV1alpha2 is the statusWriter of a v1alpha2 BundleDeployment.
func (r *BundleDeploymentReconciler) writeV1alpha2(ctx context.Context, s *scope.Scope, _ status.Facts, out status.Computed, write, _ bool) (bool, *metav1.Condition, error) {
	if !write {
		return false, nil, nil
	}
	installed := apimeta.FindStatusCondition(out.Status.Conditions, rukpakv1alpha2.TypeInstalled)
	return true, installed, kube.WriteStatus(ctx, r.client, r.recorder, s.BD, out.Status)
}
