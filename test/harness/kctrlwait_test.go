package harness

import (
	"context"
	"strings"
	"testing"
	"time"

	kcv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// TestKctrlWait steps a PackageInstall's status through what kapp-controller
// reports, one poll at a time, and checks where the wait ends.
func TestKctrlWait(t *testing.T) {
	failed := func(msg string) kcv1alpha1.GenericStatus {
		return kcv1alpha1.GenericStatus{ObservedGeneration: 2, UsefulErrorMessage: msg,
			Conditions: []kcv1alpha1.Condition{{Type: kcv1alpha1.ReconcileFailed, Status: corev1.ConditionTrue}}}
	}
	succeeded := kcv1alpha1.GenericStatus{ObservedGeneration: 2,
		Conditions: []kcv1alpha1.Condition{{Type: kcv1alpha1.ReconcileSucceeded, Status: corev1.ConditionTrue}}}
	stale := succeeded
	stale.ObservedGeneration = 1
	for _, tc := range []struct {
		name    string
		steps   []kcv1alpha1.GenericStatus
		polls   int // where the wait ends
		wantErr string
	}{
		{name: "succeeded", steps: []kcv1alpha1.GenericStatus{succeeded}, polls: 1},
		{name: "an older generation's success is not this one's", steps: []kcv1alpha1.GenericStatus{stale, failed("Expected to find at least one file")},
			polls: 2, wantErr: "Expected to find at least one file"},
		{name: "a failure ends it", steps: []kcv1alpha1.GenericStatus{failed("Error (see .status.usefulErrorMessage for details)"), succeeded},
			polls: 1, wantErr: "usefulErrorMessage"},
		{name: "kapp-controller losing its own vendir waits for its retry",
			steps: []kcv1alpha1.GenericStatus{failed("Fetching resources: waitid: no child processes"), succeeded}, polls: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(len(tc.steps)+2)*time.Second)
			defer cancel()
			polls := 0
			err := kctrlWait(ctx, func(context.Context) (int64, kcv1alpha1.GenericStatus, error) {
				st := tc.steps[min(polls, len(tc.steps)-1)]
				polls++
				return 2, st, nil
			})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("wait: %v, want success", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("wait: %v, want an error naming %q", err, tc.wantErr)
			}
			if polls != tc.polls {
				t.Errorf("polled %d times, want %d: the wait ended at the wrong status", polls, tc.polls)
			}
		})
	}
}
