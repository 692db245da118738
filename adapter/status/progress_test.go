package status

import (
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// look is one look at work under way: the App as it is then.
type look struct {
	at  time.Duration
	app *kappctrlv1alpha1.App
}

// walk computes the status at each look as the BundleDeployment reconciler does: a held
// status's Progress is kept for the next look, a written one is stored
// and its Progress dropped. It returns the Installed reason of each write.
func walk(t *testing.T, looks []look) []string {
	t.Helper()
	bd := newBD(nil)
	var held Progress
	var wrote []string
	for _, l := range looks {
		out := Compute(Facts{BD: bd, App: l.app, Now: t0.Add(l.at), Progress: held})
		held = out.Progress
		if out.Hold {
			continue
		}
		bd.Status = out.Status
		installed := apimeta.FindStatusCondition(out.Status.Conditions, "Installed")
		said := installed.Message
		if installed.Status == metav1.ConditionTrue {
			said = installed.Reason
		}
		wrote = append(wrote, l.at.String()+" "+said)
	}
	return wrote
}

// Work under way is said once after the delay, then only where the stored
// status has been behind for ProgressFollow: the in-progress writes an
// install costs do not grow with a long wait in kapp-controller's queue
// followed by a quick run.
func TestCompute_StepsWrittenOnceTheyLast(t *testing.T) {
	t.Parallel()
	const succeeded = "InstallationSucceeded"
	s := time.Second
	queued := newApp(1, 0, "")
	templating := newApp(1, 1, kappctrlv1alpha1.Reconciling, fetchOK(40, 41))
	applying := newApp(1, 1, kappctrlv1alpha1.Reconciling, fetchOK(40, 41), templateDone(42), deployRunning(42, 43, kappApplyingOut))
	waiting := newApp(1, 1, kappctrlv1alpha1.Reconciling, fetchOK(40, 41), templateDone(42), deployRunning(42, 44, kappWaitingOut))
	waitingMore := newApp(1, 1, kappctrlv1alpha1.Reconciling, fetchOK(40, 41), templateDone(42), deployRunning(42, 44, kappWaitingOut+kappApplyingOut))
	done := newApp(1, 1, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(40, 41), templateDone(42), deployDone(42, 45, ""))
	tests := []struct {
		name  string
		looks []look
		want  []string
	}{
		{
			name:  "done within the delay: the outcome only",
			looks: []look{{0, queued}, {1 * s, templating}, {2 * s, applying}, {4 * s, done}},
			want:  []string{"4s " + succeeded},
		},
		{
			name: "a long wait in kapp-controller's queue, then a quick run: the wait and the outcome",
			looks: []look{{0, queued}, {5 * s, queued}, {40 * s, templating}, {41 * s, applying},
				{42 * s, waiting}, {44 * s, done}},
			want: []string{"5s Waiting for the bundle to be unpacked", "44s " + succeeded},
		},
		{
			name: "a run that goes on after the wait: said once the stored status has been behind for the bound",
			looks: []look{{0, queued}, {5 * s, queued}, {40 * s, templating}, {41 * s, applying},
				{42 * s, waiting}, {47 * s, waiting}, {54 * s, waiting}, {55 * s, waiting}, {60 * s, waiting}, {72 * s, done}},
			want: []string{"5s Waiting for the bundle to be unpacked", "55s " + kappWaiting, "1m12s " + succeeded},
		},
		{
			name: "steps alternating: the same bound",
			looks: []look{{0, queued}, {5 * s, queued}, {10 * s, applying}, {13 * s, waiting}, {16 * s, waitingMore},
				{19 * s, waiting}, {22 * s, waitingMore}, {25 * s, waiting}, {28 * s, waitingMore}, {31 * s, done}},
			want: []string{"5s Waiting for the bundle to be unpacked", "25s " + kappWaiting, "31s " + succeeded},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := walk(t, tt.looks)
			if len(got) != len(tt.want) {
				t.Fatalf("writes %q, want %q", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("write %d: %q, want %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// A held status names when to look again: when the first bound ends, or,
// once progress was said, when the stored status will have been behind for
// ProgressFollow.
func TestCompute_HoldLooksAgainAtTheBound(t *testing.T) {
	t.Parallel()
	bd := newBD(nil)
	app := newApp(1, 1, kappctrlv1alpha1.Reconciling, fetchOK(5, 6))
	first := Compute(Facts{BD: bd, App: app, Now: t0})
	if !first.Hold || first.WriteAfter != ProgressDelay || first.Progress != (Progress{BehindSince: t0}) {
		t.Fatalf("nothing said yet: hold %v after %v leaving %+v, want held for %v", first.Hold, first.WriteAfter, first.Progress, ProgressDelay)
	}
	said := Compute(Facts{BD: bd, App: app, Now: t0, Progress: Progress{Said: true}})
	if !said.Hold || said.WriteAfter != ProgressFollow || said.Progress != (Progress{BehindSince: t0, Said: true}) {
		t.Fatalf("progress said: hold %v after %v leaving %+v, want held for %v", said.Hold, said.WriteAfter, said.Progress, ProgressFollow)
	}
	later := Compute(Facts{BD: bd, App: app, Now: t0.Add(ProgressFollow - time.Second), Progress: said.Progress})
	if !later.Hold || later.WriteAfter != time.Second {
		t.Fatalf("behind for the bound less a second: hold %v after %v, want held for 1s", later.Hold, later.WriteAfter)
	}
	written := Compute(Facts{BD: bd, App: app, Now: t0.Add(ProgressFollow), Progress: said.Progress})
	if written.Hold || written.Progress != (Progress{Said: true}) {
		t.Fatalf("behind for the bound: hold %v leaving %+v, want written and said", written.Hold, written.Progress)
	}
}
