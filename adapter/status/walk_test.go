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

// gated is w held at its step's gate.
func gated(w *Walk, g *WalkGate) *Walk { w.Gate = g; return w }

// step marks the App as installing the catalog version v.
func step(v string) appState {
	return func(a *kappctrlv1alpha1.App) { a.Annotations[catalog.AnnotationVersion] = v }
}

// TestCompute_Walk follows a generation walking 1.0.0 → 1.0.1 → 1.2.0:
// Installed stays generation 1's until the last step is deployed, Progressing
// names the path and the step, a failed step stops the walk naming what
// stays installed, and the end names the path.
func TestCompute_Walk(t *testing.T) {
	t.Parallel()
	walk := func(i int) *Walk {
		return &Walk{Channel: "beta", Versions: []string{"1.0.0", "1.0.1", "1.2.0"}, Step: i}
	}
	tests := []struct {
		name string
		walk *Walk
		app  *kappctrlv1alpha1.App
		// installedGen and installedStatus are Installed's; progressing
		// the words Progressing's message holds ("" when it is absent).
		installedGen    int64
		installedStatus metav1.ConditionStatus
		installedWords  string
		progressing     metav1.ConditionStatus
		progressWords   string
		// lookAgain is when the status asks to be computed again; 0: not checked.
		lookAgain time.Duration
	}{
		{name: "the first step written, not yet picked up", walk: walk(1), app: newApp(3, 2, kappctrlv1alpha1.ReconcileSucceeded, step("1.0.0"), madeFor(1)),
			installedGen: 1, installedStatus: "True", progressing: "True", progressWords: "1.0.0 → 1.0.1 → 1.2.0: installing 1.0.1 (1.0.0 is installed)"},
		{name: "the first step deploying", walk: walk(1), app: newApp(3, 3, kappctrlv1alpha1.Reconciling, step("1.0.1"), fetchOK(1, 2)),
			installedGen: 1, installedStatus: "True", progressing: "True", progressWords: "installing 1.0.1"},
		{name: "the first step deployed: not yet this generation's outcome", walk: walk(1), app: newApp(3, 3, kappctrlv1alpha1.ReconcileSucceeded, step("1.0.1"), fetchOK(1, 2)),
			installedGen: 1, installedStatus: "True", progressing: "True", progressWords: "installing 1.0.1"},
		{name: "the first step deployed, an object not yet Current: the next waits, looking again at the bound", walk: gated(walk(1), &WalkGate{Why: "Widget ns/w is InProgress", Deadline: t0.Add(2 * time.Hour)}),
			app: newApp(3, 3, kappctrlv1alpha1.ReconcileSucceeded, step("1.0.1"), fetchOK(1, 2)), installedGen: 1, installedStatus: "True", progressing: "True",
			progressWords: "1.0.0 → 1.0.1 → 1.2.0: 1.0.1 is deployed and the next step waits, until 2026-01-01T02:00:00Z at most, for its installed objects to be Current (1.0.0 is installed): Widget ns/w is InProgress",
			lookAgain:     time.Hour},
		{name: "the first step deployed, an object Failed: the walk stops there", walk: gated(walk(1), &WalkGate{Stopped: true, Why: "Widget ns/w is Failed: broken"}),
			app: newApp(3, 3, kappctrlv1alpha1.ReconcileSucceeded, step("1.0.1"), fetchOK(1, 2)), installedGen: 2, installedStatus: "False",
			installedWords: "The upgrade along channel beta (1.0.0 → 1.0.1 → 1.2.0) stopped at 1.0.1; 1.0.0 stays installed: 1.0.1 is deployed, and its installed objects are not healthy: Widget ns/w is Failed: broken",
			progressing:    "False", progressWords: "stopped at 1.0.1; 1.0.0 stays installed"},
		{name: "the last step deploying", walk: walk(2), app: newApp(4, 4, kappctrlv1alpha1.Reconciling, step("1.2.0"), fetchOK(1, 2)),
			installedGen: 1, installedStatus: "True", progressing: "True", progressWords: "installing 1.2.0 (1.0.1 is installed)"},
		{name: "the last step failed", walk: walk(2), app: newApp(4, 4, kappctrlv1alpha1.ReconcileFailed, step("1.2.0"), fetchOK(1, 2), deployFailed(3, "kapp: Error: admission webhook denied the CRD")),
			installedGen: 2, installedStatus: "False", installedWords: "The upgrade along channel beta (1.0.0 → 1.0.1 → 1.2.0) stopped at 1.2.0; 1.0.1 stays installed: ",
			progressing: "False", progressWords: "stopped at 1.2.0; 1.0.1 stays installed"},
		{name: "the walk's end", walk: walk(2), app: newApp(4, 4, kappctrlv1alpha1.ReconcileSucceeded, step("1.2.0"), fetchOK(1, 2)),
			installedGen: 2, installedStatus: "True", installedWords: "upgraded along channel beta one edge at a time: 1.0.0 → 1.0.1 → 1.2.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bd := newBD(nil)
			bd.Status.Conditions = installedAt(1, pinnedSource).conds
			bd.Status.ObservedGeneration = 1
			out := Compute(Facts{BD: bd, App: tt.app, Walk: tt.walk, Now: t0.Add(time.Hour), Progress: Progress{BehindSince: t0, Said: true}})
			inst := apimeta.FindStatusCondition(out.Status.Conditions, rukpakv1alpha2.TypeInstalled)
			if inst.ObservedGeneration != tt.installedGen || inst.Status != tt.installedStatus || !strings.Contains(inst.Message, tt.installedWords) {
				t.Fatalf("Installed %+v, want %s at generation %d with %q", inst, tt.installedStatus, tt.installedGen, tt.installedWords)
			}
			if tt.lookAgain != 0 && out.LookAgainAfter != tt.lookAgain {
				t.Fatalf("look again after %s, want %s", out.LookAgainAfter, tt.lookAgain)
			}
			if out.Status.ObservedGeneration != tt.installedGen {
				t.Fatalf("status.observedGeneration %d: kapp's wait would end early", out.Status.ObservedGeneration)
			}
			p := apimeta.FindStatusCondition(out.Status.Conditions, rukpakv1alpha2.TypeProgressing)
			if tt.progressing == "" {
				if p != nil {
					t.Fatalf("Progressing %+v after the walk", p)
				}
				return
			}
			if p == nil || p.Status != tt.progressing || p.ObservedGeneration != 2 || !strings.Contains(p.Message, tt.progressWords) {
				t.Fatalf("Progressing %+v, want %s with %q", p, tt.progressing, tt.progressWords)
			}
		})
	}
}
