package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	ctlconf "carvel.dev/kapp/pkg/kapp/config"
	ctlres "carvel.dev/kapp/pkg/kapp/resources"
	"carvel.dev/kapp/pkg/kapp/resourcesmisc"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
)

// kapp's own wait rule code judges an OperatorInstall with the Package's
// kapp config: done and failed when its generation is not installed, done
// when it is installed or held, and not done while the controller has
// said nothing of the generation (a hold said of the generation before,
// as before an approval arrived, is no outcome).
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
	installed := catalogsv1alpha1.TypeInstalled
	held := catalogsv1alpha1.TypeHeld
	for _, tt := range []struct {
		name       string
		conditions []metav1.Condition
		done, ok   bool
		words      string
	}{
		{name: "nothing said yet", conditions: nil, words: "No failing or successful conditions found"},
		{name: "the generation before installed", conditions: []metav1.Condition{cond(installed, "True", "InstallationSucceeded", 2)}, words: "Waiting for generation 3"},
		{name: "installed", conditions: []metav1.Condition{cond(installed, "True", "InstallationSucceeded", 3)}, done: true, ok: true},
		{name: "not installed", conditions: []metav1.Condition{cond(installed, "False", "UpgradeFailed", 3)}, done: true, words: "Installed == False: UpgradeFailed (message: Installed says so)"},
		{name: "the generation before failed", conditions: []metav1.Condition{cond(installed, "False", "UpgradeFailed", 2)}, words: "Waiting for generation 3"},
		{name: "under way", conditions: []metav1.Condition{cond(installed, "Unknown", "Installing", 3)}, words: "No failing or successful conditions found"},
		{name: "held for approval", conditions: []metav1.Condition{cond(installed, "True", "InstallationSucceeded", 2), cond(held, "True", catalogsv1alpha1.ReasonAwaitingApproval, 3)},
			done: true, ok: true, words: "Held == True: AwaitingApproval"},
		{name: "held, then approved: the hold said before is no outcome", conditions: []metav1.Condition{cond(installed, "True", "InstallationSucceeded", 2), cond(held, "True", catalogsv1alpha1.ReasonAwaitingApproval, 2)},
			words: "Waiting for generation 3"},
		{name: "retracted", conditions: []metav1.Condition{cond(held, "True", catalogsv1alpha1.ReasonRetracted, 3)}, done: true, ok: true},
		{name: "the values broke the version installed while held", conditions: []metav1.Condition{cond(installed, "False", "UpgradeFailed", 3), cond(held, "True", catalogsv1alpha1.ReasonAwaitingApproval, 2)},
			done: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			oi := &catalogsv1alpha1.OperatorInstall{ObjectMeta: metav1.ObjectMeta{Name: "efs", Namespace: "ops", Generation: 3},
				Status: catalogsv1alpha1.OperatorInstallStatus{Conditions: tt.conditions}}
			oi.SetGroupVersionKind(catalogsv1alpha1.GroupVersion.WithKind("OperatorInstall"))
			data, err := json.Marshal(oi)
			if err != nil {
				t.Fatal(err)
			}
			r, err := ctlres.NewResourceFromBytes(data)
			if err != nil {
				t.Fatal(err)
			}
			w := resourcesmisc.NewCustomWaitingResource(r, conf.WaitRules())
			if w == nil {
				t.Fatal("no wait rule matches an OperatorInstall")
			}
			got := w.IsDoneApplying()
			if got.Done != tt.done || got.Successful != tt.ok || !strings.Contains(got.Message, tt.words) {
				t.Errorf("%+v, want done %v, successful %v, with %q", got, tt.done, tt.ok, tt.words)
			}
		})
	}
}
