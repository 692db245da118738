package status

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// What kapp-controller (v0.53.1) records of a run as it goes, which the
// decisions below read. A run that follows a spec change writes the App's
// status: Reconciling with observedGeneration (the sub-statuses still the
// previous run's); the fetch's result once vendir ends (its startedAt is
// reset in memory only); the template's once ytt or helm ends; then, while
// kapp runs, the deploy's output every 2 s (updatedAt, finished=false), and
// the outcome. Nothing is written while vendir, ytt or helm run. A restarted
// kapp-controller (or one whose last write failed) finds the App Reconciling
// with observedGeneration == generation and a fresh updatedAt, decides the
// App needs no run before its sync period ("Reconcile noop"), and waits.

// Step is the step of kapp-controller's run that an App's status shows.
type Step int

const (
	// StepNone: no run under way for the spec the status reports.
	StepNone Step = iota
	// StepFetch: vendir fetches (or the run's last write was lost); silent.
	StepFetch
	// StepTemplate: ytt or helm template runs; silent.
	StepTemplate
	// StepDeploy: kapp applies and waits; kapp-controller writes every 2 s.
	StepDeploy
)

// DeployHeartbeat is how often kapp-controller writes a running deploy's
// output to the App's status.
const DeployHeartbeat = 2 * time.Second

// RunStep is the step of the run under way that app's status reports,
// told apart by the sub-statuses' updatedAt (whole seconds, so a run that
// follows the previous one within the same second is read as fetching).
func RunStep(app *kappctrlv1alpha1.App) Step {
	if app == nil || len(app.Status.Conditions) == 0 || app.Status.Conditions[0].Type != kappctrlv1alpha1.Reconciling {
		return StepNone
	}
	f, t, d := app.Status.Fetch, app.Status.Template, app.Status.Deploy
	switch {
	case f == nil || f.UpdatedAt.IsZero() || f.UpdatedAt.Before(&f.StartedAt) || f.Error != "":
		return StepFetch
	case (t == nil || t.UpdatedAt.Before(&f.UpdatedAt)) && (d == nil || !f.UpdatedAt.Before(&d.UpdatedAt)):
		return StepTemplate
	case t != nil && t.Error == "" && !t.UpdatedAt.Before(&f.UpdatedAt) &&
		(d == nil || d.UpdatedAt.Before(&t.UpdatedAt) || !d.Finished):
		return StepDeploy
	default:
		// The previous run's results, complete: this run has yet to fetch.
		return StepFetch
	}
}

// Rerun is the adapter's last request that kapp-controller run an App
// again, from the annotation core.rukpak.io/rerun.
type Rerun struct {
	// Generation is the App's generation the request was made at.
	Generation int64
	At         time.Time
	// Why is "drift" or "stalled".
	Why string
}

// Reasons for a rerun.
const (
	RerunDrift = "drift"
	// RerunCanceled: drift repair canceled the run under way along with the
	// request (what it applied was deleted under it): two writes, so the
	// request spans two generations.
	RerunCanceled = "drift-canceled"
	RerunStalled  = "stalled"
	// RerunHeld: a request made during a template step that kapp-controller
	// left waiting HeldAfter, while it had nothing else to do: the run it
	// asked about is still under way, so the step still runs.
	RerunHeld = "held"
)

// String is the annotation's value.
func (r Rerun) String() string {
	return fmt.Sprintf("%d %s %s", r.Generation, r.At.UTC().Format(time.RFC3339Nano), r.Why)
}

// RerunOf reads app's rerun annotation.
func RerunOf(app *kappctrlv1alpha1.App) (Rerun, bool) {
	if app == nil {
		return Rerun{}, false
	}
	parts := strings.Fields(app.Annotations[rukpakv1alpha2.AnnotationRerun])
	if len(parts) != 3 {
		return Rerun{}, false
	}
	gen, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return Rerun{}, false
	}
	at, err := time.Parse(time.RFC3339Nano, parts[1])
	if err != nil {
		return Rerun{}, false
	}
	return Rerun{Generation: gen, At: at, Why: parts[2]}, true
}

// PendingRerun is the adapter's request for a run that kapp-controller
// has not picked up yet, while the App's status still reports the run of
// the spec the request was made for. A canceling request's first write
// makes the App canceled; kapp-controller may look at it before the second
// write and then records that generation as observed without running it,
// keeping the canceled run's conditions (v0.53.1, "Canceled/paused"), so
// that status too still reports the run the request was made for.
func PendingRerun(app *kappctrlv1alpha1.App) (Rerun, bool) {
	r, ok := RerunOf(app)
	if !ok || app.Generation <= r.Generation || app.Generation > r.Generation+r.writes() {
		return Rerun{}, false
	}
	switch observed := app.Status.ObservedGeneration; {
	case observed == r.Generation:
	case r.Why == RerunCanceled && observed == r.Generation+1:
	default:
		return Rerun{}, false
	}
	return r, true
}

// writes is how many generations the request's writes add.
func (r Rerun) writes() int64 {
	if r.Why == RerunCanceled {
		return 2
	}
	return 1
}

// ForDrift says drift repair made the request.
func (r Rerun) ForDrift() bool { return r.Why == RerunDrift || r.Why == RerunCanceled }

// ReportsSpec says app's status reports a run of its current spec: it was
// picked up at this generation, or the only change since is a rerun
// request (which changes spec.paused alone, and spec.canceled for a
// canceled run), not yet picked up.
func ReportsSpec(app *kappctrlv1alpha1.App) bool {
	if app == nil || len(app.Status.Conditions) == 0 {
		return false
	}
	if app.Status.ObservedGeneration == app.Generation {
		return true
	}
	_, ok := PendingRerun(app)
	return ok
}

// TemplateProbeAfter is how long a template step runs before the adapter
// asks kapp-controller for a run of the App again: nothing tells a step
// still running from a run kapp-controller lost, but the request does. A
// run under way keeps going (kapp-controller runs an App once at a time and
// interrupts no step for a spec change); the request is then picked up when
// it ends. A lost run is picked up at once, and its step starts over. Half
// the template timeout, so that what the request showed is known when the
// timeout passes, and at most StepQuiet.
func TemplateProbeAfter(timeout time.Duration) time.Duration {
	return min(timeout/2, StepQuiet)
}

// HeldAfter is how long a request made during a template step must wait,
// kapp-controller otherwise idle, before the step counts as still running:
// the rest of the template timeout.
func HeldAfter(timeout time.Duration) time.Duration {
	return timeout - TemplateProbeAfter(timeout)
}

// StepQuiet is how long a run under way may leave the App's status
// unchanged before the adapter has kapp-controller run it again: fifteen of
// the deploy's heartbeats; a fetch or template step that takes longer is
// asked about as TemplateProbeAfter says.
const StepQuiet = 30 * time.Second

// deployPhase is what kapp was last doing in the run's deploy, from its
// output: applying changes, or waiting for what it applied to become ready.
func deployPhase(d *kappctrlv1alpha1.AppStatusDeploy) string {
	if d == nil {
		return kappApplying
	}
	applying := strings.LastIndex(d.Stdout, "---- applying ")
	waiting := strings.LastIndex(d.Stdout, "---- waiting on ")
	if waiting > applying {
		return kappWaiting
	}
	return kappApplying
}

const (
	kappTemplating = "kapp-controller is templating the bundle"
	kappApplying   = "kapp is applying the bundle"
	kappWaiting    = "kapp applied the bundle and is waiting for its objects to become ready"
)
