package status

import (
	"encoding/json"
	"strings"
	"testing"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzCompute feeds arbitrary App statuses to the mapping: it must never
// panic and every condition must carry a usable message and reason.
func FuzzCompute(f *testing.F) {
	f.Add(`{"observedGeneration":1,"conditions":[{"type":"ReconcileFailed","status":"True","message":"<nil>"}],"fetch":{"error":"x","exitCode":1}}`, int64(1))
	f.Add(`{"observedGeneration":1,"conditions":[{"type":"ReconcileSucceeded","status":"True"}],"fetch":{"stdout":"url: a@sha256:0123"}}`, int64(1))
	f.Add(`{"observedGeneration":2,"conditions":[{"type":"Reconciling"}]}`, int64(2))
	f.Add(`{"conditions":[{"type":"DeleteFailed"}],"usefulErrorMessage":""}`, int64(0))
	f.Fuzz(func(t *testing.T, appStatus string, generation int64) {
		app := &kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Generation: generation}}
		if err := json.Unmarshal([]byte(appStatus), &app.Status); err != nil {
			t.Skip()
		}
		r := Compute(Facts{BD: newBD(nil), App: app, Now: t0})
		for _, c := range r.Status.Conditions {
			if c.Reason == "" || strings.TrimSpace(c.Message) == "" || strings.Contains(c.Message, "<nil>") {
				t.Fatalf("unusable condition %+v", c)
			}
			if len(c.Message) > maxMessage+256 {
				t.Fatalf("message of %d bytes", len(c.Message))
			}
		}
	})
}
