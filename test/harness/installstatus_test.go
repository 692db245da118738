package harness

import (
	"strings"
	"testing"

	kcv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What a wait on a PackageInstall updated to version 2.0.0 (generation 2)
// reads, by what its App is.
func TestInstallStatus(t *testing.T) {
	status := func(observed int64, cond kcv1alpha1.ConditionType, msg string) kcv1alpha1.GenericStatus {
		return kcv1alpha1.GenericStatus{ObservedGeneration: observed, UsefulErrorMessage: msg,
			Conditions: []kcv1alpha1.Condition{{Type: cond, Status: corev1.ConditionTrue}}}
	}
	pi := func(st kcv1alpha1.GenericStatus) *packagingv1alpha1.PackageInstall {
		p := &packagingv1alpha1.PackageInstall{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
		p.Status.GenericStatus, p.Status.Version = st, "2.0.0"
		return p
	}
	app := func(version string, gen int64, st kcv1alpha1.GenericStatus) *kcv1alpha1.App {
		a := &kcv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Generation: gen, Annotations: map[string]string{appPackageVersion: version}}}
		a.Status.GenericStatus = st
		return a
	}
	for _, tc := range []struct {
		name string
		pi   *packagingv1alpha1.PackageInstall
		app  *kcv1alpha1.App
		done bool
		err  string
	}{
		{name: "the old version's App succeeded, copied at the new generation", pi: pi(status(2, kcv1alpha1.ReconcileSucceeded, "")),
			app: app("1.0.0", 5, status(5, kcv1alpha1.ReconcileSucceeded, ""))},
		{name: "the App moved but has not deployed yet", pi: pi(status(2, kcv1alpha1.ReconcileSucceeded, "")),
			app: app("2.0.0", 6, status(5, kcv1alpha1.ReconcileSucceeded, ""))},
		{name: "the new version's App failed while the PackageInstall still says succeeded", pi: pi(status(2, kcv1alpha1.ReconcileSucceeded, "")),
			app: app("2.0.0", 6, status(6, kcv1alpha1.ReconcileFailed, "kapp: deploy failed")), done: true, err: "kapp: deploy failed"},
		{name: "the new version deployed", pi: pi(status(2, kcv1alpha1.ReconcileSucceeded, "")),
			app: app("2.0.0", 6, status(6, kcv1alpha1.ReconcileSucceeded, "")), done: true},
		{name: "the PackageInstall's own failure, its App untouched", pi: pi(status(2, kcv1alpha1.ReconcileFailed, "Stopped installing matched version")),
			app: app("1.0.0", 5, status(5, kcv1alpha1.ReconcileSucceeded, "")), done: true, err: "Stopped installing matched version"},
		{name: "no App", pi: pi(status(2, kcv1alpha1.ReconcileFailed, "no package")), done: true, err: "no package"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done, err := Reconciled(2, installStatus(tc.pi, tc.app))
			if done != tc.done || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("done %v, err %v; want done %v, err %q", done, err, tc.done, tc.err)
			}
		})
	}
}
