package drift

import (
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
)

// A run kapp-controller lost: kapp-controller (v0.53.1) was killed in the
// middle of an App's run, or its write of the run's progress failed (while
// kube-apiserver was away). The App stays Reconciling with observedGeneration
// == generation, and kapp-controller, restarted or not, decides from the
// fresh updatedAt of the sub-statuses that the App needs no run before its
// sync period ("Reconcile noop"); every restart pushes that out again.
//
// What tells such a run from one under way is the App's status over time
// (status.RunStep):
//   - while kapp deploys, kapp-controller writes the deploy's output every
//     2 s: a status unchanged for status.StepQuiet (fifteen of those) is a
//     run that no longer goes on. Asking for a new run is then sound.
//   - while vendir fetches or ytt or helm template, kapp-controller writes
//     nothing: silence tells nothing. The request is then a probe, made
//     after status.StepQuiet (a template step: status.TemplateProbeAfter): a
//     lost run is picked up at once and starts over; a run under way is not
//     interrupted (kapp-controller runs an App once at a time and cancels
//     no step on a spec change), and the request waits until it ends. If it
//     was under way, the App's status next shows that run going on (its
//     observedGeneration still the one before the request), and silent steps
//     of that spec are not probed again: one extra run for a slow step, not
//     one per step.

// stallCheck is when app's run under way, whose status last changed at
// quiet, is to be asked about, and whether its step is a silent one; zero
// when no run of the App's current spec is under way.
func stallCheck(app *kappctrlv1alpha1.App, quiet time.Time, templateTimeout time.Duration) (at time.Time, silent bool) {
	if app.Spec.Paused || app.Spec.Canceled || !app.DeletionTimestamp.IsZero() || app.Status.ObservedGeneration != app.Generation {
		// Paused, going away, or a spec to pick up, which kapp-controller
		// does at once and at every start.
		return time.Time{}, false
	}
	bound := status.StepQuiet
	switch status.RunStep(app) {
	case status.StepNone:
		return time.Time{}, false
	case status.StepDeploy:
		return quiet.Add(bound), false
	case status.StepTemplate:
		if templateTimeout > 0 {
			bound = status.TemplateProbeAfter(templateTimeout)
		}
	}
	return quiet.Add(bound), true
}

// probe is a request for a new run made during a silent step.
type probe struct {
	// generation is the App's generation when it was made.
	generation int64
	spec       uint64
	// heldAt, for a template step's probe, is when the request will have
	// waited status.HeldAfter; zero for a fetch step's, or once marked held.
	heldAt time.Time
	// idleSince is since when kapp-controller has had no other App to run,
	// as far as the adapter sees; zero: it has.
	idleSince time.Time
}

// idleFor is how long kapp-controller must have had nothing else to run
// for a request it left waiting to count as held: a worker that just came
// free takes a waiting App within milliseconds.
const idleFor = 2 * time.Second

// heldCheck decides whether a template step's probe, still waiting at now,
// shows the step still running: only a kapp-controller with no other App to
// run (othersBusy false, for idleFor) that leaves the request waiting for
// status.HeldAfter is running the App already. A busy one (just restarted,
// with a queue) or a stopped one (whose other Apps then stay busy) proves
// nothing. It returns the probe's new idleSince, and when to look again
// (zero: at the next App event).
//
// The idleness is watched from idleFor before heldAt, so that a
// kapp-controller idle all along has the probe held at heldAt, not idleFor
// after it (the template deadline is reported then).
func (p probe) heldCheck(now time.Time, othersBusy bool) (held bool, idleSince, again time.Time) {
	watchFrom := p.heldAt.Add(-idleFor)
	switch {
	case p.heldAt.IsZero():
		return false, time.Time{}, time.Time{}
	case now.Before(watchFrom):
		return false, p.idleSince, watchFrom
	case othersBusy:
		return false, time.Time{}, time.Time{}
	case p.idleSince.IsZero():
		return false, now, later(now.Add(idleFor), p.heldAt)
	case now.Before(p.heldAt) || now.Sub(p.idleSince) < idleFor:
		return false, p.idleSince, later(p.idleSince.Add(idleFor), p.heldAt)
	}
	return true, p.idleSince, time.Time{}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// alive reads a status change of the App after the probe: the old run's
// (its observedGeneration still the one before the request, nothing else
// changed the spec) says that run was under way; otherwise kapp-controller
// picked the request up, and the old run had been lost.
func (p probe) alive(app *kappctrlv1alpha1.App) bool {
	return app.Status.ObservedGeneration == p.generation && app.Generation == p.generation+1
}
