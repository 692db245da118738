package status

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestInProgress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		r    Result
		want bool
	}{
		{"waiting for kapp-controller", Result{Unpacked: c("Unpacked", "False", "UnpackPending", "x"), Installed: installWait, Healthy: healthyWait}, true},
		{"upgrade fetching beside the kept install", Result{Unpacked: c("Unpacked", "False", "Unpacking", "x"), Installed: installedTrue, Healthy: healthyTrue}, true},
		{"deploying", Result{Unpacked: unpackedTrue, Installed: c("Installed", "Unknown", "Installing", "x"), Healthy: healthyWait}, true},
		{"installed", Result{Unpacked: unpackedTrue, Installed: installedTrue, Healthy: healthyTrue}, false},
		{"fetch failed", Result{Unpacked: c("Unpacked", "False", "UnpackFailed", "x"), Installed: installWait, Healthy: healthyWait}, false},
		{"deploy failed", Result{Unpacked: unpackedTrue, Installed: c("Installed", "False", "InstallFailed", "x"), Healthy: healthyFalse}, false},
		{"deleting", Result{Unpacked: unpackedTrue, Installed: c("Installed", "False", "Deleting", "x"), Healthy: healthyFalse}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := InProgress(tt.r); got != tt.want {
				t.Errorf("InProgress() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestShowsProgress(t *testing.T) {
	t.Parallel()
	pending := c("Unpacked", "False", "UnpackPending", "x")
	pending.ObservedGeneration = 2
	done := installedTrue
	done.ObservedGeneration = 2
	for _, tt := range []struct {
		name  string
		conds []metav1.Condition
		gen   int64
		want  bool
	}{
		{"nothing written yet", nil, 2, false},
		{"progress of this generation", []metav1.Condition{pending, done}, 2, true},
		{"progress of an older generation", []metav1.Condition{pending}, 3, false},
		{"an outcome only", []metav1.Condition{done}, 2, false},
	} {
		if got := ShowsProgress(tt.conds, tt.gen); got != tt.want {
			t.Errorf("%s: ShowsProgress() = %v, want %v", tt.name, got, tt.want)
		}
	}
}
