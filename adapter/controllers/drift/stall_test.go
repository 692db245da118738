package drift

import (
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
)

// runAt is an App whose status reports a run of generation gen (observed
// obs) in the given step, the sub-statuses written at the seconds given.
func runAt(gen, obs int64, cond kappctrlv1alpha1.ConditionType, fetch, template, deploy int, deployFinished bool) *kappctrlv1alpha1.App {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	sec := func(s int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(s) * time.Second)) }
	app := &kappctrlv1alpha1.App{}
	app.Generation, app.Status.ObservedGeneration = gen, obs
	app.Status.Conditions = []kappctrlv1alpha1.Condition{{Type: cond, Status: corev1.ConditionTrue}}
	if fetch > 0 {
		app.Status.Fetch = &kappctrlv1alpha1.AppStatusFetch{StartedAt: sec(fetch - 1), UpdatedAt: sec(fetch)}
	}
	if template > 0 {
		app.Status.Template = &kappctrlv1alpha1.AppStatusTemplate{UpdatedAt: sec(template)}
	}
	if deploy > 0 {
		app.Status.Deploy = &kappctrlv1alpha1.AppStatusDeploy{StartedAt: sec(template), UpdatedAt: sec(deploy), Finished: deployFinished}
	}
	return app
}

func TestStallCheck(t *testing.T) {
	t.Parallel()
	quiet := time.Date(2026, 1, 1, 12, 5, 0, 0, time.UTC)
	reconciling, succeeded := kappctrlv1alpha1.Reconciling, kappctrlv1alpha1.ReconcileSucceeded
	paused := runAt(2, 2, reconciling, 1, 2, 4, false)
	paused.Spec.Paused = true
	deleting := runAt(2, 2, reconciling, 1, 2, 4, false)
	deleting.DeletionTimestamp = &metav1.Time{Time: quiet}
	tests := []struct {
		name     string
		app      *kappctrlv1alpha1.App
		template time.Duration
		after    time.Duration // 0: never
		silent   bool
	}{
		{"at rest", runAt(2, 2, succeeded, 1, 2, 4, true), time.Minute, 0, false},
		{"a new spec not picked up: kapp-controller picks it up at once and at every start", runAt(3, 2, reconciling, 1, 2, 4, false), time.Minute, 0, false},
		{"paused by its user", paused, time.Minute, 0, false},
		{"being deleted", deleting, time.Minute, 0, false},
		// kapp-controller writes a deploy's progress every 2 s.
		{"kapp deploying", runAt(2, 2, reconciling, 1, 2, 4, false), time.Minute, status.StepQuiet, false},
		{"templated, kapp about to start", runAt(2, 2, reconciling, 10, 11, 4, true), time.Minute, status.StepQuiet, false},
		// Silent steps: the request is a probe.
		{"fetching", runAt(2, 2, reconciling, 1, 2, 4, true), time.Minute, status.StepQuiet, true},
		{"first run, fetching", runAt(1, 1, reconciling, 0, 0, 0, false), time.Minute, status.StepQuiet, true},
		{"templating, with the harness's 10 s deadline: probed at 5 s", runAt(2, 2, reconciling, 10, 2, 4, true), 10 * time.Second, 5 * time.Second, true},
		{"templating, with the default 2 min deadline", runAt(2, 2, reconciling, 10, 2, 4, true), 2 * time.Minute, status.StepQuiet, true},
		{"templating, no deadline", runAt(2, 2, reconciling, 10, 2, 4, true), 0, status.StepQuiet, true},
	}
	for _, tt := range tests {
		at, silent := stallCheck(tt.app, quiet, tt.template)
		var after time.Duration
		if !at.IsZero() {
			after = at.Sub(quiet)
		}
		if after != tt.after || silent != tt.silent {
			t.Errorf("%s: asked after %v (silent %v), want after %v (silent %v)", tt.name, after, silent, tt.after, tt.silent)
		}
	}
}

func TestProbeAlive(t *testing.T) {
	t.Parallel()
	p := probe{generation: 4}
	for _, tt := range []struct {
		name     string
		gen, obs int64
		alive    bool
	}{
		{"the old run wrote after the request: it was under way", 5, 4, true},
		{"kapp-controller picked the request up: the old run was lost", 5, 5, false},
		{"the spec changed too", 6, 4, false},
	} {
		app := runAt(tt.gen, tt.obs, kappctrlv1alpha1.Reconciling, 1, 0, 0, false)
		if got := p.alive(app); got != tt.alive {
			t.Errorf("%s: alive = %v, want %v", tt.name, got, tt.alive)
		}
	}
}

func TestProbeHeldCheck(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	heldAt := t0.Add(5 * time.Second)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	tests := []struct {
		name       string
		p          probe
		now        time.Time
		othersBusy bool
		held       bool
		idleSince  time.Time
		again      time.Time
	}{
		{"a fetch step's probe is never held", probe{}, at(60), false, false, time.Time{}, time.Time{}},
		{"long before the wait ends: look again idleFor before it", probe{heldAt: heldAt}, at(1), false, false, time.Time{}, at(3)},
		{"kapp-controller busy with other Apps: proves nothing, look at the next App event", probe{heldAt: heldAt}, at(3.5), true, false, time.Time{}, time.Time{}},
		{"kapp-controller idle idleFor before the wait ends: held at its end if it stays so", probe{heldAt: heldAt}, at(3), false, false, at(3), heldAt},
		{"idle since then, the wait not yet over", probe{heldAt: heldAt, idleSince: at(3)}, at(4), false, false, at(3), heldAt},
		{"idle all along: held as the wait ends", probe{heldAt: heldAt, idleSince: at(3)}, at(5), false, true, at(3), time.Time{}},
		{"waited, kapp-controller idle only since: confirm it stays idle", probe{heldAt: heldAt}, at(6), false, false, at(6), at(8)},
		{"idle, not yet for long enough", probe{heldAt: heldAt, idleSince: at(6)}, at(7), false, false, at(6), at(8)},
		{"busy again meanwhile: starts over", probe{heldAt: heldAt, idleSince: at(6)}, at(7), true, false, time.Time{}, time.Time{}},
		{"idle for long enough: the run asked about is under way", probe{heldAt: heldAt, idleSince: at(6)}, at(8), false, true, at(6), time.Time{}},
	}
	for _, tt := range tests {
		held, idleSince, again := tt.p.heldCheck(tt.now, tt.othersBusy)
		if held != tt.held || !idleSince.Equal(tt.idleSince) || !again.Equal(tt.again) {
			t.Errorf("%s: held %v, idle since %v, again at %v; want %v, %v, %v", tt.name, held, idleSince, again, tt.held, tt.idleSince, tt.again)
		}
	}
}
