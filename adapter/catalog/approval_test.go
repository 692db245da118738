package catalog

import (
	"strings"
	"testing"

	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
)

func TestHeld(t *testing.T) {
	t.Parallel()
	installed := Entry{Package: "efs", Bundle: "efs.2.0.0", Version: "2.0.0"}
	asked := Entry{Package: "efs", Channel: "stable", Bundle: "efs.2.1.0", Version: "2.1.0+build.3", RefName: "stable.efs.example.com"}
	spec := func(approval, approved string) catalogsv1alpha1.OperatorInstallSpec {
		return catalogsv1alpha1.OperatorInstallSpec{UpgradeApproval: approval, ApprovedVersion: approved}
	}
	for _, tc := range []struct {
		name string
		spec catalogsv1alpha1.OperatorInstallSpec
		// nothing: nothing is installed yet.
		nothing bool
		same    bool
		held    string
	}{
		{name: "no approval values: automatic"},
		{name: "Automatic", spec: spec(ApprovalAutomatic, "")},
		{name: "Automatic with a version named: it is not read", spec: spec(ApprovalAutomatic, "1.0.0")},
		{name: "Manual, nothing approved", spec: spec(ApprovalManual, ""),
			held: `upgrade of efs held: 2.1.0 waits for approval (upgradeApproval: Manual), and 2.0.0 stays installed. See what it changes with: rukpak-kapp upgrade plan prom -n ops --to 2.1.0; approve exactly this version with: kctrl package installed update -n ops -i prom --values-file FILE, FILE holding the install's values and approvedVersion: "2.1.0"`},
		{name: "Manual, the Package version approved", spec: spec(ApprovalManual, "2.1.0")},
		{name: "Manual, the OLM version approved", spec: spec(ApprovalManual, "2.1.0+build.3")},
		{name: "Manual, an earlier version approved: held again", spec: spec(ApprovalManual, "2.0.0"),
			held: "2.1.0 waits for approval (upgradeApproval: Manual), and 2.0.0 stays installed (the version approved is 2.0.0)"},
		{name: "Manual, the version installed: no move, nothing held", spec: spec(ApprovalManual, ""), same: true},
		{name: "Manual, a first install not approved: nothing installed", spec: spec(ApprovalManual, ""), nothing: true,
			held: "install of efs held: 2.1.0 waits for approval (upgradeApproval: Manual), and nothing is installed until it is approved"},
		{name: "Manual, a first install approved", spec: spec(ApprovalManual, "2.1.0"), nothing: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := asked
			if tc.same {
				asked = installed
			}
			err := Held(installed, !tc.nothing, asked, ApprovalOf(tc.spec), "ops/prom")
			switch {
			case tc.held == "" && err != nil:
				t.Fatalf("held: %v", err)
			case tc.held != "" && (err == nil || !strings.Contains(err.Error(), tc.held)):
				t.Fatalf("err %v, want %q", err, tc.held)
			}
		})
	}
}
