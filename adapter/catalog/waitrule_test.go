package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	ctlconf "carvel.dev/kapp/pkg/kapp/config"
	ctlres "carvel.dev/kapp/pkg/kapp/resources"
	"carvel.dev/kapp/pkg/kapp/resourcesmisc"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// kapp's own wait rule code judges a catalog BundleDeployment with the
// Package's kapp config: done and failed when its generation is not
// installed, done when it is installed or held, a hold for approval only
// while the annotations kapp applied still hold the move, and not done
// while the adapter has said nothing of the generation.
func TestKappWaitRule(t *testing.T) {
	t.Parallel()
	res, err := ctlres.NewResourcesFromBytes([]byte(kappConfig))
	if err != nil {
		t.Fatal(err)
	}
	_, conf, err := ctlconf.NewConfFromResources(res)
	if err != nil {
		t.Fatal(err)
	}
	cond := func(typ, status, reason string, gen int64) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Reason: reason, Message: typ + " says so", ObservedGeneration: gen}
	}
	manual := map[string]string{AnnotationUpgradeApproval: ApprovalManual, AnnotationVersion: "2.0.0+build.1"}
	approved := map[string]string{AnnotationUpgradeApproval: ApprovalManual, AnnotationVersion: "2.0.0+build.1", AnnotationApprovedVersion: "2.0.0"}
	held := cond(rukpakv1alpha2.TypeHeld, "True", rukpakv1alpha2.ReasonAwaitingApproval, 3)
	for _, tt := range []struct {
		name        string
		annotations map[string]string
		conditions  []metav1.Condition
		done, ok    bool
		words       string
	}{
		{name: "nothing said yet", conditions: nil, words: "Waiting for generation 3"},
		{name: "the generation before installed", conditions: []metav1.Condition{cond(rukpakv1alpha2.TypeInstalled, "True", "InstallationSucceeded", 2)}},
		{name: "installed", conditions: []metav1.Condition{cond(rukpakv1alpha2.TypeInstalled, "True", "InstallationSucceeded", 3)}, done: true, ok: true},
		{name: "not installed", conditions: []metav1.Condition{cond(rukpakv1alpha2.TypeInstalled, "False", "UpgradeFailed", 3)}, done: true, words: "Installed is False: UpgradeFailed"},
		{name: "held for approval", annotations: manual, conditions: []metav1.Condition{cond(rukpakv1alpha2.TypeInstalled, "True", "InstallationSucceeded", 2), held},
			done: true, ok: true, words: "Held: Held says so"},
		{name: "held, then approved: the hold said before is no outcome", annotations: approved, conditions: []metav1.Condition{cond(rukpakv1alpha2.TypeInstalled, "True", "InstallationSucceeded", 2), held}},
		{name: "retracted, whatever the approval", annotations: approved, conditions: []metav1.Condition{cond(rukpakv1alpha2.TypeHeld, "True", rukpakv1alpha2.ReasonRetracted, 3)}, done: true, ok: true},
		{name: "a hold of the generation before", annotations: manual, conditions: []metav1.Condition{cond(rukpakv1alpha2.TypeHeld, "True", rukpakv1alpha2.ReasonAwaitingApproval, 2)}},
		{name: "the values broke the version installed while held", annotations: manual, conditions: []metav1.Condition{cond(rukpakv1alpha2.TypeInstalled, "False", "UpgradeFailed", 3)}, done: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bd := &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: "efs.ops", Generation: 3, Annotations: tt.annotations},
				Status: rukpakv1alpha2.BundleDeploymentStatus{Conditions: tt.conditions}}
			bd.SetGroupVersionKind(rukpakv1alpha2.GroupVersion.WithKind("BundleDeployment"))
			data, err := json.Marshal(bd)
			if err != nil {
				t.Fatal(err)
			}
			r, err := ctlres.NewResourceFromBytes(data)
			if err != nil {
				t.Fatal(err)
			}
			w := resourcesmisc.NewCustomWaitingResource(r, conf.WaitRules())
			if w == nil {
				t.Fatal("no wait rule matches a BundleDeployment")
			}
			got := w.IsDoneApplying()
			if got.Done != tt.done || got.Successful != tt.ok || !strings.Contains(got.Message, tt.words) {
				t.Errorf("%+v, want done %v, successful %v, with %q", got, tt.done, tt.ok, tt.words)
			}
		})
	}
}
