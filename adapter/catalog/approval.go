package catalog

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Manual approval of upgrades, as OLM v0's installPlanApproval: Manual: the
// values upgradeApproval and approvedVersion of a catalog Package become
// these annotations of its BundleDeployment.
const (
	AnnotationUpgradeApproval = "catalog.rukpak-kapp.dev/upgrade-approval"
	AnnotationApprovedVersion = "catalog.rukpak-kapp.dev/approved-version"
)

// AnnotationHeld, on the App of a catalog BundleDeployment whose
// generation is held (Held), names the bundle the App installs meanwhile:
// the one installed before, with the generation's other fields. An App
// under way with it still has that bundle installed.
const AnnotationHeld = "catalog.rukpak-kapp.dev/held"

// The values of upgradeApproval.
const (
	ApprovalAutomatic = "Automatic"
	ApprovalManual    = "Manual"
)

// Approval is what a catalog BundleDeployment's annotations say of the
// approval of its upgrades.
type Approval struct {
	// Manual holds every move to another version until it is approved.
	Manual bool
	// Approved is the version approved ("" none): the OLM version or the
	// Package's.
	Approved string
	// Foreign names the writer (field manager) that last set an approval
	// annotation when it is not the one that wrote the install's own
	// annotations (its PackageInstall's template, through kapp): such an
	// approval does not count, and every move is held.
	Foreign string
}

// ApprovalOf reads the approval from a BundleDeployment's annotations (a
// BundleDeployment from a Package published before the values existed is
// Automatic).
func ApprovalOf(annotations map[string]string) Approval {
	return Approval{Manual: annotations[AnnotationUpgradeApproval] == ApprovalManual, Approved: annotations[AnnotationApprovedVersion]}
}

// ApprovalFrom is the approval as the install's owner set it: the values
// of its PackageInstall, which its Package's template writes as
// annotations through kapp. An approval annotation that another writer set
// last (kubectl annotate, an edit by hand: the object's managedFields say
// who) is not the owner's word, and holds every move (Foreign). An object
// whose managedFields are not kept is read as its annotations say.
func ApprovalFrom(obj metav1.Object) Approval {
	a := ApprovalOf(obj.GetAnnotations())
	owner := annotationManager(obj.GetManagedFields(), AnnotationInstall)
	if owner == "" {
		return a
	}
	for _, k := range []string{AnnotationUpgradeApproval, AnnotationApprovedVersion} {
		if m := annotationManager(obj.GetManagedFields(), k); m != "" && m != owner {
			return Approval{Manual: true, Foreign: m}
		}
	}
	return a
}

// annotationManager is the field manager that owns annotation key ("":
// none recorded).
func annotationManager(fields []metav1.ManagedFieldsEntry, key string) string {
	for _, f := range fields {
		if f.FieldsV1 == nil || f.Subresource != "" {
			continue
		}
		var set struct {
			Metadata struct {
				Annotations map[string]json.RawMessage `json:"f:annotations"`
			} `json:"f:metadata"`
		}
		if json.Unmarshal(f.FieldsV1.Raw, &set) != nil {
			continue
		}
		if _, ok := set.Metadata.Annotations["f:"+key]; ok {
			return f.Manager
		}
	}
	return ""
}

// Covers says the approval lets the install move to e: it is not manual,
// or it approves exactly e's version.
func (a Approval) Covers(e Entry) bool {
	if !a.Manual {
		return true
	}
	return a.Approved != "" && (a.Approved == e.Version || a.Approved == e.PackageVersion())
}

// HeldError is a move to a version no approval covers.
type HeldError struct {
	// Installed is the version installed (its Bundle "": none).
	Installed, Asked Entry
	Approved         string
	// Foreign is the writer of an approval that does not count, and
	// BundleDeployment the name of the object it wrote.
	Foreign, BundleDeployment string
	// Install is the PackageInstall "namespace/name" ("" unknown).
	Install string
}

func (e *HeldError) Error() string {
	version := e.Asked.PackageVersion()
	var b strings.Builder
	if e.Installed.Bundle == "" {
		fmt.Fprintf(&b, "install of %s held: %s waits for approval (upgradeApproval: %s), and nothing is installed until it is approved", e.Asked.Package, version, ApprovalManual)
	} else {
		fmt.Fprintf(&b, "upgrade of %s held: %s waits for approval (upgradeApproval: %s), and %s stays installed", e.Installed.Package, version, ApprovalManual, e.Installed.Version)
	}
	if e.Approved != "" {
		fmt.Fprintf(&b, " (the version approved is %s)", e.Approved)
	}
	if e.Foreign != "" {
		fmt.Fprintf(&b, " (the approval annotations were last set by %s, not by the PackageInstall's values, so they do not count: approve through the values; "+
			"if this stays, remove the hand's annotation with kubectl annotate bundledeployment %s %s- and update the values again)",
			e.Foreign, e.BundleDeployment, AnnotationApprovedVersion)
	}
	fmt.Fprintf(&b, ". See what it changes with: %s; approve exactly this version with: %s", PlanCommand(e.Install, version), ApproveCommand(e.Install, version))
	return b.String()
}

// PlanCommand is the command that shows what moving the PackageInstall
// install ("namespace/name"; "" unknown) to version changes.
func PlanCommand(install, version string) string {
	ns, name := installName(install)
	return fmt.Sprintf("rukpak-kapp upgrade plan %s -n %s --to %s", name, ns, version)
}

// ApproveCommand is the kctrl call that approves version for install, an
// install whose upgradeApproval is Manual.
func ApproveCommand(install, version string) string {
	ns, name := installName(install)
	return fmt.Sprintf("kctrl package installed update -n %s -i %s --values-file FILE, FILE holding the install's values and approvedVersion: %q", ns, name, version)
}

// UpdateCommand is the kctrl call that moves install to version.
func UpdateCommand(install, version string) string {
	ns, name := installName(install)
	return fmt.Sprintf("kctrl package installed update -n %s -i %s --version %s", ns, name, version)
}

func installName(install string) (ns, name string) {
	ns, name, ok := strings.Cut(install, "/")
	if !ok {
		return "NAMESPACE", "NAME"
	}
	return ns, name
}

// Held judges a move of the BundleDeployment bundleDeployment from
// installed (isInstalled false: nothing is installed yet) to asked: held
// when the catalog retracted asked
// (retracted names the revision that did; "" it did not), or when the
// approval a does not cover it. The error says why and what to do; nil: not
// held. Staying on the bundle installed is never held.
func Held(installed Entry, isInstalled bool, asked Entry, a Approval, retracted, install, bundleDeployment string) error {
	if isInstalled && installed.Bundle == asked.Bundle && installed.Package == asked.Package {
		return nil
	}
	if !isInstalled {
		installed = Entry{}
	}
	if retracted != "" {
		return &RetractedError{Asked: asked, Revision: retracted, Install: install}
	}
	if a.Covers(asked) {
		return nil
	}
	return &HeldError{Installed: installed, Asked: asked, Approved: a.Approved, Foreign: a.Foreign, Install: install, BundleDeployment: bundleDeployment}
}
