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
}

// alive reads a status change of the App after the probe: the old run's
// (its observedGeneration still the one before the request, nothing else
// changed the spec) says that run was under way; otherwise kapp-controller
// picked the request up, and the old run had been lost.
func (p probe) alive(app *kappctrlv1alpha1.App) bool {
	return app.Status.ObservedGeneration == p.generation && app.Generation == p.generation+1
}
