package cmd

import (
	"strings"
	"testing"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/upgradeplan"
)

func TestWriteUpgradePlan(t *testing.T) {
	plan := &upgradeplan.Plan{BundleDeployment: "efs.ops", Package: "aws-efs-operator", Channel: "stable", Installed: "1.0.0", To: "1.2.0",
		Path: []string{"1.0.0", "1.1.0", "1.2.0"},
		Hops: []upgradeplan.Hop{
			{From: "1.0.0", To: "1.1.0", Image: "r/efs:v1.1.0", InstallModes: []string{"AllNamespaces"}},
			{From: "1.1.0", To: "1.2.0", Image: "r/efs:v1.2.0"},
		},
	}
	plan.Hops[0].ClusterRules.Gained = []string{"get,list batch/jobs"}
	plan.Hops[0].Images.Added, plan.Hops[0].Images.Removed = []string{"op:2"}, []string{"op:1"}
	plan.Hops[1].CRDs = []upgradeplan.CRDChange{{Name: "sharedvolumes.aws-efs.managed.openshift.io", Change: "changed", Verdict: "failed to validate safety"}}
	var out strings.Builder
	writeUpgradePlan(&out, "ops", "efs", plan)
	for _, want := range []string{
		"PackageInstall ops/efs (BundleDeployment efs.ops): package aws-efs-operator, channel stable, 1.0.0 installed\n",
		"path to 1.2.0: 1.0.0 → 1.1.0 → 1.2.0 (watching: all namespaces where the bundle supports it, else its own)\n",
		"hop 1 of 2: 1.0.0 → 1.1.0 (r/efs:v1.1.0): installs\n  cluster RBAC gained: get,list batch/jobs\n  image added: op:2\n  image removed: op:1\n  install modes: AllNamespaces\n",
		"hop 2 of 2: 1.1.0 → 1.2.0 (r/efs:v1.2.0): REFUSED: the walk stops here\n  CRD sharedvolumes.aws-efs.managed.openshift.io changed: REFUSED by the CRD upgrade safety check (failed to validate safety)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the plan lacks %q:\n%s", want, out.String())
		}
	}
	if !plan.Refused() {
		t.Error("a refused CRD change does not refuse the plan")
	}
}
