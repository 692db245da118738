package drift

import (
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func appIn(generation, observed int64, cond kappctrlv1alpha1.ConditionType, deployBegan time.Time) *kappctrlv1alpha1.App {
	app := &kappctrlv1alpha1.App{}
	app.Generation = generation
	app.Status.ObservedGeneration = observed
	if cond != "" {
		app.Status.Conditions = []kappctrlv1alpha1.Condition{{Type: cond, Status: corev1.ConditionTrue}}
	}
	if !deployBegan.IsZero() {
		app.Status.Deploy = &kappctrlv1alpha1.AppStatusDeploy{StartedAt: metav1.NewTime(deployBegan)}
	}
	return app
}

func TestAppStates(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name                   string
		app                    *kappctrlv1alpha1.App
		busy, succeeded, faild bool
		// covered: a change at t0 is repaired by the App's last deploy.
		covered bool
	}{
		{"new generation not picked up yet", appIn(2, 1, kappctrlv1alpha1.ReconcileSucceeded, t0.Add(-time.Minute)), true, false, false, false},
		{"never reconciled", appIn(1, 0, "", time.Time{}), true, false, false, false},
		{"reconciling", appIn(2, 2, kappctrlv1alpha1.Reconciling, t0.Add(-time.Minute)), true, false, false, false},
		{"deployed before the change", appIn(2, 2, kappctrlv1alpha1.ReconcileSucceeded, t0.Add(-time.Second)), false, true, false, false},
		{"deploy began in the same second: not trusted", appIn(2, 2, kappctrlv1alpha1.ReconcileSucceeded, t0.Add(time.Second)), false, true, false, false},
		{"deploy began two seconds after the change", appIn(2, 2, kappctrlv1alpha1.ReconcileSucceeded, t0.Add(2*time.Second)), false, true, false, true},
		{"failed: kapp-controller retries", appIn(2, 2, kappctrlv1alpha1.ReconcileFailed, t0.Add(-time.Second)), false, false, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := busy(tt.app); got != tt.busy {
				t.Errorf("busy = %v, want %v", got, tt.busy)
			}
			if got := succeeded(tt.app); got != tt.succeeded {
				t.Errorf("succeeded = %v, want %v", got, tt.succeeded)
			}
			if got := failed(tt.app); got != tt.faild {
				t.Errorf("failed = %v, want %v", got, tt.faild)
			}
			if got := covered(tt.app, t0); got != tt.covered {
				t.Errorf("covered = %v, want %v", got, tt.covered)
			}
		})
	}
}

func TestInstalledKindsAndSpecHash(t *testing.T) {
	t.Parallel()
	app := appIn(1, 1, kappctrlv1alpha1.ReconcileSucceeded, time.Now())
	if got := installedKinds(app); got != nil {
		t.Errorf("kinds of an App without kapp's report = %v", got)
	}
	app.Status.Deploy.KappDeployStatus = &kappctrlv1alpha1.KappDeployStatus{AssociatedResources: kappctrlv1alpha1.AssociatedResources{
		GroupKinds: []metav1.GroupKind{{Kind: "ConfigMap"}, {Group: "apps", Kind: "Deployment"}, {Kind: "ConfigMap"}},
	}}
	want := []schema.GroupKind{{Kind: "ConfigMap"}, {Group: "apps", Kind: "Deployment"}}
	if got := installedKinds(app); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("kinds = %v, want %v", got, want)
	}

	app.Spec.DefaultNamespace = "a"
	h := specHash(app)
	app.Spec.Paused = true
	if specHash(app) != h {
		t.Error("a re-apply request changed the spec's identity")
	}
	app.Spec.DefaultNamespace = "b"
	if specHash(app) == h {
		t.Error("a new spec kept the old identity")
	}
}
