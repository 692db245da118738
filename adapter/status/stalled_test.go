package status

import (
	"strings"
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
)

func templateDone(end int) appState {
	return func(a *kappctrlv1alpha1.App) {
		a.Status.Template = &kappctrlv1alpha1.AppStatusTemplate{UpdatedAt: at(end)}
	}
}

func TestWithTemplateDeadline(t *testing.T) {
	t.Parallel()
	const limit = time.Minute
	reconciling := kappctrlv1alpha1.Reconciling
	tests := []struct {
		name     string
		app      *kappctrlv1alpha1.App
		now      int
		limit    time.Duration
		stalled  bool
		wantLeft time.Duration
	}{
		{"no App yet", nil, 100, limit, false, 0},
		{"still fetching", newApp(2, 2, reconciling, func(a *kappctrlv1alpha1.App) {
			a.Status.Fetch = &kappctrlv1alpha1.AppStatusFetch{StartedAt: at(10), UpdatedAt: at(5)}
		}), 100, limit, false, 0},
		{"template running, within the limit", newApp(2, 2, reconciling, fetchOK(10, 12), templateDone(3)), 42, limit, false, 30 * time.Second},
		{"first run, template running, within the limit", newApp(2, 2, reconciling, fetchOK(10, 12)), 12, limit, false, time.Minute},
		{"template running past the limit", newApp(2, 2, reconciling, fetchOK(10, 12), templateDone(3)), 72, limit, true, 0},
		{"template done, deploy running", newApp(2, 2, reconciling, fetchOK(10, 12), templateDone(12)), 500, limit, false, 0},
		{"run finished", newApp(2, 2, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(10, 12), templateDone(3)), 500, limit, false, 0},
		{"older generation", newApp(3, 2, reconciling, fetchOK(10, 12)), 500, limit, false, 0},
		{"fetch failed", newApp(2, 2, reconciling, fetchFailed(10, 12, "boom")), 500, limit, false, 0},
		{"deadline off", newApp(2, 2, reconciling, fetchOK(10, 12)), 500, 0, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := Result{Unpacked: unpackedTrue, Installed: c("Installed", "Unknown", "Installing", "x"), Healthy: healthyWait}
			got, left := WithTemplateDeadline(in, tt.app, at(tt.now).Time, tt.limit)
			if left != tt.wantLeft {
				t.Errorf("time left = %v, want %v", left, tt.wantLeft)
			}
			if !tt.stalled {
				if got != in {
					t.Errorf("result changed: %+v", got)
				}
				return
			}
			if got.Installed.Status != "False" || got.Installed.Reason != "InstallFailed" || got.Healthy != healthyFalse || got.Unpacked != unpackedTrue {
				t.Errorf("got %+v", got)
			}
			for _, want := range []string{"more than 1m0s", "billion laughs"} {
				if !strings.Contains(got.Installed.Message, want) {
					t.Errorf("message %q lacks %q", got.Installed.Message, want)
				}
			}
		})
	}
}
