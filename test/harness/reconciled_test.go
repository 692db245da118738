package harness

import (
	"strings"
	"testing"

	kcv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

func TestReconciled(t *testing.T) {
	at := func(observed int64, typ kcv1alpha1.ConditionType, msg string) kcv1alpha1.GenericStatus {
		return kcv1alpha1.GenericStatus{ObservedGeneration: observed, UsefulErrorMessage: msg, FriendlyDescription: "Reconcile failed",
			Conditions: []kcv1alpha1.Condition{{Type: typ, Status: corev1.ConditionTrue}}}
	}
	for _, tc := range []struct {
		name    string
		status  kcv1alpha1.GenericStatus
		done    bool
		wantErr string
	}{
		{name: "succeeded", status: at(2, kcv1alpha1.ReconcileSucceeded, ""), done: true},
		{name: "an older generation's success is not this one's", status: at(1, kcv1alpha1.ReconcileSucceeded, "")},
		{name: "an older generation's failure is not this one's", status: at(1, kcv1alpha1.ReconcileFailed, "Expected to find at least one file")},
		{name: "still reconciling", status: at(2, kcv1alpha1.Reconciling, "")},
		{name: "no conditions yet", status: kcv1alpha1.GenericStatus{ObservedGeneration: 2}},
		{name: "a failure ends it, with the useful error message", status: at(2, kcv1alpha1.ReconcileFailed, "Expected to find at least one file"),
			done: true, wantErr: "Expected to find at least one file. Reconcile failed"},
		{name: "kapp-controller losing its own vendir waits for its retry", status: at(2, kcv1alpha1.ReconcileFailed, "Fetching resources: waitid: no child processes")},
		{name: "a helm step that failed saying nothing but Starlark's warning waits for the retry",
			status: at(2, kcv1alpha1.ReconcileFailed, "2026/12/04 13:40:55 Starlark failed to allocate 4GB address space: cannot allocate memory. Integer performance may suffer.\n")},
		{name: "a helm failure that says why ends it, warning or not",
			status: at(2, kcv1alpha1.ReconcileFailed, "2026/12/04 13:40:55 Starlark failed to allocate 4GB address space: cannot allocate memory. Integer performance may suffer.\nError: template: hello/templates/x.yaml:1: bad"),
			done:   true, wantErr: "Error: template"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done, err := Reconciled(2, tc.status)
			if done != tc.done {
				t.Errorf("done %t, want %t", done, tc.done)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one naming %q", err, tc.wantErr)
			}
		})
	}
}
