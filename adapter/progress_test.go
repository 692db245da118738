package adapter

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func TestProgressHold(t *testing.T) {
	t.Parallel()
	cond := func(typ, reason string, s metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: reason}
	}
	pending := status.Result{
		Unpacked:  cond("Unpacked", rukpakv1alpha2.ReasonUnpackPending, metav1.ConditionFalse),
		Installed: cond("Installed", rukpakv1alpha2.ReasonInstallPending, metav1.ConditionUnknown),
	}
	failed := status.Result{
		Unpacked:  cond("Unpacked", rukpakv1alpha2.ReasonUnpackFailed, metav1.ConditionFalse),
		Installed: cond("Installed", rukpakv1alpha2.ReasonInstallPending, metav1.ConditionUnknown),
	}
	bd := &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 1}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var p progressHold

	if wait, after := p.hold(bd, pending, t0); !wait || after != progressDelay {
		t.Fatalf("first progress: got wait=%v after=%v, want a wait of %v", wait, after, progressDelay)
	}
	if wait, after := p.hold(bd, pending, t0.Add(2*time.Second)); !wait || after != 3*time.Second {
		t.Fatalf("progress 2s on: got wait=%v after=%v, want the rest of the delay", wait, after)
	}
	if wait, _ := p.hold(bd, pending, t0.Add(progressDelay)); wait {
		t.Fatal("progress past the delay is written")
	}
	if wait, _ := p.hold(bd, failed, t0.Add(time.Second)); wait {
		t.Fatal("a failure is never held")
	}

	shown := bd.DeepCopy()
	shown.Status.Conditions = []metav1.Condition{{Type: "Unpacked", Reason: rukpakv1alpha2.ReasonUnpackPending, ObservedGeneration: 1}}
	if wait, after := p.hold(shown, pending, t0.Add(time.Hour)); !wait || after != 0 {
		t.Fatalf("progress already shown: got wait=%v after=%v, want a silent wait for the outcome", wait, after)
	}

	next := bd.DeepCopy()
	next.Generation = 2
	p.hold(next, pending, t0.Add(time.Hour))
	if wait, after := p.hold(next, pending, t0.Add(time.Hour+time.Second)); !wait || after != progressDelay-time.Second {
		t.Fatalf("a new generation restarts the delay: got wait=%v after=%v", wait, after)
	}
}
