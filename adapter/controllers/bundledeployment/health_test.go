package bundledeployment

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// The gauge sums every BundleDeployment's last look, and an object that
// turns Failed is one Event, not one per look.
func TestHealthTracker(t *testing.T) {
	// Not parallel: the gauge is the process's.
	var tr healthTracker
	rec := events.NewFakeRecorder(10)
	a := &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: "health-a"}}
	b := &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: "health-b"}}
	gauge := func(s kstatus.Status) float64 { return testutil.ToFloat64(installedObjects.WithLabelValues(string(s))) }
	base := map[kstatus.Status]float64{}
	for _, s := range stateOrderForTest {
		base[s] = gauge(s)
	}
	failed := status.Health{Counts: map[kstatus.Status]int{kstatus.CurrentStatus: 2, kstatus.FailedStatus: 1},
		NotCurrent: []status.Judged{{Object: "Widget ns/w", State: kstatus.FailedStatus, Message: "stalled"}}}
	current := status.Health{Counts: map[kstatus.Status]int{kstatus.CurrentStatus: 3}}

	tr.set(a, failed, rec)
	tr.set(a, failed, rec)
	tr.set(b, current, rec)
	if got := gauge(kstatus.CurrentStatus) - base[kstatus.CurrentStatus]; got != 5 {
		t.Errorf("Current = %v, want 5", got)
	}
	if got := gauge(kstatus.FailedStatus) - base[kstatus.FailedStatus]; got != 1 {
		t.Errorf("Failed = %v, want 1", got)
	}
	if n := len(rec.Events); n != 1 {
		t.Fatalf("%d Events, want 1", n)
	}
	if e := <-rec.Events; e != "Warning ObjectFailed Widget ns/w is Failed: stalled" {
		t.Errorf("Event %q", e)
	}

	tr.set(a, current, rec)
	tr.set(a, failed, rec)
	if n := len(rec.Events); n != 1 {
		t.Errorf("%d Events after it turned Failed again, want 1", n)
	}
	tr.Forget("health-a", "")
	tr.Forget("health-b", "")
	for _, s := range stateOrderForTest {
		if got := gauge(s); got != base[s] {
			t.Errorf("%s = %v after both were forgotten, want %v", s, got, base[s])
		}
	}
}

var stateOrderForTest = []kstatus.Status{kstatus.CurrentStatus, kstatus.FailedStatus}
