package catalog

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestHeld(t *testing.T) {
	t.Parallel()
	installed := Entry{Package: "efs", Bundle: "efs.2.0.0", Version: "2.0.0"}
	asked := Entry{Package: "efs", Channel: "stable", Bundle: "efs.2.1.0", Version: "2.1.0+build.3", RefName: "stable.efs.example.com"}
	manual := map[string]string{AnnotationUpgradeApproval: ApprovalManual}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		// nothing: nothing is installed yet.
		nothing   bool
		same      bool
		retracted string
		foreign   string
		held      string
	}{
		{name: "no approval values: automatic"},
		{name: "Automatic", annotations: map[string]string{AnnotationUpgradeApproval: ApprovalAutomatic}},
		{name: "Manual, nothing approved", annotations: manual,
			held: `upgrade of efs held: 2.1.0 waits for approval (upgradeApproval: Manual), and 2.0.0 stays installed. See what it changes with: rukpak-kapp upgrade plan prom -n ops --to 2.1.0; approve exactly this version with: kctrl package installed update -n ops -i prom --values-file FILE, FILE holding the install's values and approvedVersion: "2.1.0"`},
		{name: "Manual, the Package version approved", annotations: map[string]string{AnnotationUpgradeApproval: ApprovalManual, AnnotationApprovedVersion: "2.1.0"}},
		{name: "Manual, the OLM version approved", annotations: map[string]string{AnnotationUpgradeApproval: ApprovalManual, AnnotationApprovedVersion: "2.1.0+build.3"}},
		{name: "Manual, an earlier version approved: held again", annotations: map[string]string{AnnotationUpgradeApproval: ApprovalManual, AnnotationApprovedVersion: "2.0.0"},
			held: "2.1.0 waits for approval (upgradeApproval: Manual), and 2.0.0 stays installed (the version approved is 2.0.0)"},
		{name: "Manual, the version installed: no move, nothing held", annotations: manual, same: true},
		{name: "Manual, a first install not approved: nothing installed", annotations: manual, nothing: true,
			held: "install of efs held: 2.1.0 waits for approval (upgradeApproval: Manual), and nothing is installed until it is approved"},
		{name: "Manual, a first install approved", annotations: map[string]string{AnnotationUpgradeApproval: ApprovalManual, AnnotationApprovedVersion: "2.1.0"}, nothing: true},
		{name: "retracted, whatever the approval", retracted: "registry.example/catalog@sha256:2",
			held: "version 2.1.0+build.3 of efs was retracted from channel stable (the catalog's revision registry.example/catalog@sha256:2 no longer holds bundle efs.2.1.0)"},
		{name: "an approval another writer set does not count", foreign: "kubectl-annotate",
			held: "(the approval annotations were last set by kubectl-annotate, not by the PackageInstall's values, so they do not count: approve through the values; if this stays, remove the hand's annotation with kubectl annotate bundledeployment prom.ops catalog.rukpak-kapp.dev/approved-version- and update the values again)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := ApprovalOf(tc.annotations)
			if tc.foreign != "" {
				a = Approval{Manual: true, Foreign: tc.foreign}
			}
			asked := asked
			if tc.same {
				asked = installed
			}
			err := Held(installed, !tc.nothing, asked, a, tc.retracted, "ops/prom", "prom.ops")
			switch {
			case tc.held == "" && err != nil:
				t.Fatalf("held: %v", err)
			case tc.held != "" && (err == nil || !strings.Contains(err.Error(), tc.held)):
				t.Fatalf("err %v, want %q", err, tc.held)
			}
		})
	}
}

// The approval counts only as the install's owner wrote it: an approval
// annotation another field manager set last holds every move; without
// managedFields the annotations are read as they are.
func TestApprovalFrom(t *testing.T) {
	t.Parallel()
	owned := func(manager string, keys ...string) metav1.ManagedFieldsEntry {
		var parts []string
		for _, k := range keys {
			parts = append(parts, `"f:`+k+`":{}`)
		}
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:annotations":{` + strings.Join(parts, ",") + `}}}`)}}
	}
	ann := map[string]string{AnnotationUpgradeApproval: ApprovalManual, AnnotationApprovedVersion: "2.1.0", AnnotationInstall: "prom"}
	for _, tc := range []struct {
		name   string
		fields []metav1.ManagedFieldsEntry
		want   Approval
	}{
		{name: "no managedFields", want: Approval{Manual: true, Approved: "2.1.0"}},
		{name: "all kapp's", fields: []metav1.ManagedFieldsEntry{owned("kapp", AnnotationInstall, AnnotationUpgradeApproval, AnnotationApprovedVersion)},
			want: Approval{Manual: true, Approved: "2.1.0"}},
		{name: "approved by hand", fields: []metav1.ManagedFieldsEntry{owned("kapp", AnnotationInstall, AnnotationUpgradeApproval), owned("kubectl-annotate", AnnotationApprovedVersion)},
			want: Approval{Manual: true, Foreign: "kubectl-annotate"}},
		{name: "the finalizer's writer owns no approval", fields: []metav1.ManagedFieldsEntry{owned("kapp", AnnotationInstall, AnnotationUpgradeApproval, AnnotationApprovedVersion), owned("rukpak-kapp")},
			want: Approval{Manual: true, Approved: "2.1.0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ApprovalFrom(&metav1.ObjectMeta{Annotations: ann, ManagedFields: tc.fields})
			if got != tc.want {
				t.Errorf("ApprovalFrom = %+v, want %+v", got, tc.want)
			}
		})
	}
}
