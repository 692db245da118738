package catalog

import (
	"strings"
	"testing"
)

func TestCheckApproval(t *testing.T) {
	t.Parallel()
	installed := Entry{Package: "efs", Bundle: "efs.2.0.0", Version: "2.0.0"}
	asked := Entry{Package: "efs", Bundle: "efs.2.1.0", Version: "2.1.0+build.3"}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		held        string
	}{
		{name: "no approval values: automatic"},
		{name: "Automatic", annotations: map[string]string{AnnotationUpgradeApproval: ApprovalAutomatic}},
		{name: "Manual, nothing approved", annotations: map[string]string{AnnotationUpgradeApproval: ApprovalManual},
			held: `upgrade of efs held: 2.1.0 waits for approval (upgradeApproval: Manual), and 2.0.0 stays installed. See what it changes with: rukpak-kapp upgrade plan prom -n ops --to 2.1.0; approve exactly this version with: kctrl package installed update -n ops -i prom --values-file FILE, FILE holding the install's values and approvedVersion: "2.1.0"`},
		{name: "Manual, the Package version approved", annotations: map[string]string{AnnotationUpgradeApproval: ApprovalManual, AnnotationApprovedVersion: "2.1.0"}},
		{name: "Manual, the OLM version approved", annotations: map[string]string{AnnotationUpgradeApproval: ApprovalManual, AnnotationApprovedVersion: "2.1.0+build.3"}},
		{name: "Manual, an earlier version approved: held again", annotations: map[string]string{AnnotationUpgradeApproval: ApprovalManual, AnnotationApprovedVersion: "2.0.0"},
			held: "2.1.0 waits for approval (upgradeApproval: Manual), and 2.0.0 stays installed (the version approved is 2.0.0)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckApproval(installed, asked, ApprovalOf(tc.annotations), "ops/prom")
			switch {
			case tc.held == "" && err != nil:
				t.Fatalf("held: %v", err)
			case tc.held != "" && (err == nil || !strings.Contains(err.Error(), tc.held)):
				t.Fatalf("err %v, want %q", err, tc.held)
			}
		})
	}
}
