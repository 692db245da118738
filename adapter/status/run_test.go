package status

import (
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Each row is a status kapp-controller v0.53.1 writes during a run (see
// run.go), and the step it means.
func TestRunStep(t *testing.T) {
	t.Parallel()
	reconciling := kappctrlv1alpha1.Reconciling
	tests := []struct {
		name string
		app  *kappctrlv1alpha1.App
		want Step
	}{
		{"no App", nil, StepNone},
		{"run finished", newApp(1, 1, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2), templateDone(3), deployDone(3, 5, "")), StepNone},
		{"first run picked up, nothing fetched yet", newApp(1, 1, reconciling), StepFetch},
		{"a later run picked up: the sub-statuses are the run before's", newApp(2, 2, reconciling, fetchOK(1, 2), templateDone(3), deployDone(3, 5, "")), StepFetch},
		{"a later run picked up after a failed fetch", newApp(2, 2, reconciling, fetchFailed(1, 2, "boom")), StepFetch},
		{"a later run picked up after a failed template", newApp(2, 2, reconciling, fetchOK(1, 2), templateFailed(3, "boom")), StepFetch},
		{"a later run picked up after a failed deploy", newApp(2, 2, reconciling, fetchOK(1, 2), templateDone(3), deployFailed(9, "kapp: Error")), StepFetch},
		{"fetched, first run", newApp(1, 1, reconciling, fetchOK(1, 2)), StepTemplate},
		{"fetched, later run", newApp(2, 2, reconciling, fetchOK(10, 12), templateDone(3), deployDone(3, 5, "")), StepTemplate},
		{"templated, kapp not yet reported", newApp(2, 2, reconciling, fetchOK(10, 12), templateDone(13), deployDone(3, 5, "")), StepDeploy},
		{"templated, first run", newApp(1, 1, reconciling, fetchOK(1, 2), templateDone(3)), StepDeploy},
		{"kapp running", newApp(1, 1, reconciling, fetchOK(1, 2), templateDone(3), deployRunning(3, 9, kappWaitingOut)), StepDeploy},
		{"kapp finished, the outcome not yet written", newApp(1, 1, reconciling, fetchOK(1, 2), templateDone(3), deployDone(3, 9, kappWaitingOut)), StepFetch},
		{"template failed, the outcome not yet written", newApp(1, 1, reconciling, fetchOK(1, 2), templateFailed(3, "boom")), StepFetch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := RunStep(tt.app); got != tt.want {
				t.Errorf("RunStep = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRerun(t *testing.T) {
	t.Parallel()
	r := Rerun{Generation: 7, At: time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC), Why: RerunStalled}
	app := newApp(8, 7, kappctrlv1alpha1.Reconciling)
	app.Annotations[rukpakv1alpha2.AnnotationRerun] = r.String()
	got, ok := RerunOf(app)
	if !ok || got != r {
		t.Fatalf("RerunOf(%q) = %+v, %v; want %+v", r.String(), got, ok, r)
	}
	if _, ok := PendingRerun(app); !ok || !ReportsSpec(app) {
		t.Errorf("a request not yet picked up: pending %v, reports the spec %v", ok, ReportsSpec(app))
	}
	app.Status.ObservedGeneration = 8
	if _, ok := PendingRerun(app); ok || !ReportsSpec(app) {
		t.Errorf("a request picked up: pending %v, reports the spec %v", ok, ReportsSpec(app))
	}
	app.Generation, app.Status.ObservedGeneration = 9, 7
	if _, ok := PendingRerun(app); ok || ReportsSpec(app) {
		t.Errorf("a spec change after the request: pending %v, reports the spec %v", ok, ReportsSpec(app))
	}
	canceled := Rerun{Generation: 7, At: r.At, Why: RerunCanceled}
	app.Annotations[rukpakv1alpha2.AnnotationRerun] = canceled.String()
	for gen, want := range map[int64]bool{8: true, 9: true, 10: false} {
		app.Generation = gen
		if _, ok := PendingRerun(app); ok != want || !canceled.ForDrift() {
			t.Errorf("a canceling request (two writes) at generation %d: pending %v, want %v", gen, ok, want)
		}
	}
	// kapp-controller recorded the canceled generation (8) as observed
	// without running it, before or after the second write.
	app.Status.ObservedGeneration = 8
	for gen, want := range map[int64]bool{8: true, 9: true, 10: false} {
		app.Generation = gen
		if _, ok := PendingRerun(app); ok != want || !ReportsSpec(app) && want {
			t.Errorf("a canceling request whose canceled generation kapp-controller observed, at generation %d: pending %v, want %v", gen, ok, want)
		}
	}
	app.Annotations[rukpakv1alpha2.AnnotationRerun] = Rerun{Generation: 7, At: r.At, Why: RerunDrift}.String()
	app.Generation = 8
	if _, ok := PendingRerun(app); ok {
		t.Error("a one-write request picked up counts as pending")
	}
	for _, bad := range []string{"", "7", "x 2026-01-02T03:04:05Z drift", "7 yesterday drift", "7 2026-01-02T03:04:05Z"} {
		app.Annotations[rukpakv1alpha2.AnnotationRerun] = bad
		if _, ok := RerunOf(app); ok {
			t.Errorf("RerunOf(%q) parsed", bad)
		}
	}
}
