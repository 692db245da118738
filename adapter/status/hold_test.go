package status

import (
	"strings"
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// TestCompute_Hold follows generation 2, which asks for a version that is
// held, over generation 1, installed: Installed keeps describing
// generation 1 (a held generation is never said installed) and Held=True
// describes generation 2 once what it leaves running is in place, which
// kapp's wait counts as done; a failure of the version installed with the
// generation's values is said as any other; nothing installed yet is said.
func TestCompute_Hold(t *testing.T) {
	t.Parallel()
	hold := func(keep, installed bool) *Hold {
		return &Hold{Reason: rukpakv1alpha2.ReasonAwaitingApproval, Message: "upgrade of efs held: 2.0.0 waits for approval (upgradeApproval: Manual), and 1.0.0 stays installed",
			Installed: catalog.Entry{Package: "efs", Bundle: "efs.1.0.0", Version: "1.0.0"}, HasInstalled: installed, KeepApp: keep}
	}
	tests := []struct {
		name      string
		hold      *Hold
		app       *kappctrlv1alpha1.App
		installed bool
		// installedGen and installedStatus are Installed's; held the words
		// Held's message holds ("" when it is absent).
		installedGen    int64
		installedStatus metav1.ConditionStatus
		held            string
	}{
		{name: "the version installed deploying with the generation's values", hold: hold(false, true), installed: true,
			app:          newApp(3, 3, kappctrlv1alpha1.Reconciling, fetchOK(1, 2)),
			installedGen: 1, installedStatus: "True"},
		{name: "the version installed deployed with the generation's values", hold: hold(false, true), installed: true,
			app:          newApp(3, 3, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2)),
			installedGen: 1, installedStatus: "True", held: "2.0.0 waits for approval (upgradeApproval: Manual), and 1.0.0 stays installed. 1.0.0 runs, with this generation's other fields"},
		{name: "the generation's values broke the version installed", hold: hold(false, true), installed: true,
			app:          newApp(3, 3, kappctrlv1alpha1.ReconcileFailed, fetchOK(1, 2), deployFailed(3, "kapp: Error: a field is invalid"), failures(2)),
			installedGen: 2, installedStatus: "False"},
		{name: "the App left as it is", hold: hold(true, true), installed: true,
			app:          newApp(2, 2, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2), madeFor(1)),
			installedGen: 1, installedStatus: "True", held: "1.0.0 runs as it was installed; this generation's other fields wait as well"},
		{name: "nothing installed yet", hold: hold(true, false),
			installedGen: 2, installedStatus: "Unknown", held: "Nothing is installed until then"},
		{name: "no longer held", installed: true, app: newApp(3, 3, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2)),
			installedGen: 2, installedStatus: "True"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bd := newBD(nil)
			if tt.installed {
				bd.Status.Conditions = installedAt(1, pinnedSource).conds
				bd.Status.ObservedGeneration = 1
				// A hold said before stays only while it holds.
				bd.Status.Conditions = append(bd.Status.Conditions, metav1.Condition{Type: rukpakv1alpha2.TypeHeld, Status: "True", Reason: rukpakv1alpha2.ReasonAwaitingApproval, Message: "held", ObservedGeneration: 1})
			}
			out := Compute(Facts{BD: bd, App: tt.app, Hold: tt.hold, Now: t0.Add(time.Hour), Progress: Progress{BehindSince: t0, Said: true}})
			inst := apimeta.FindStatusCondition(out.Status.Conditions, rukpakv1alpha2.TypeInstalled)
			if inst == nil || inst.ObservedGeneration != tt.installedGen || inst.Status != tt.installedStatus {
				t.Fatalf("Installed %+v, want %s at generation %d", inst, tt.installedStatus, tt.installedGen)
			}
			h := apimeta.FindStatusCondition(out.Status.Conditions, rukpakv1alpha2.TypeHeld)
			if tt.held == "" {
				if h != nil && h.ObservedGeneration == bd.Generation {
					t.Fatalf("Held %+v: want none for this generation", h)
				}
				if tt.hold == nil && h != nil {
					t.Fatalf("Held %+v after the hold", h)
				}
				return
			}
			if h == nil || h.Status != metav1.ConditionTrue || h.ObservedGeneration != 2 || h.Reason != rukpakv1alpha2.ReasonAwaitingApproval || !strings.Contains(h.Message, tt.held) {
				t.Fatalf("Held %+v, want True at generation 2 with %q", h, tt.held)
			}
			if out.Hold || out.LookAgainAfter != 0 {
				t.Errorf("hold %v, look again after %s: Held is this generation's outcome, written at once", out.Hold, out.LookAgainAfter)
			}
		})
	}
}
