package catalog

import (
	"fmt"
	"strings"
)

// Manual approval of upgrades, as OLM v0's installPlanApproval: Manual: the
// values upgradeApproval and approvedVersion of a catalog Package become
// these annotations of its BundleDeployment.
const (
	AnnotationUpgradeApproval = "catalog.rukpak-kapp.dev/upgrade-approval"
	AnnotationApprovedVersion = "catalog.rukpak-kapp.dev/approved-version"
)

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
}

// ApprovalOf reads the approval from a BundleDeployment's annotations (a
// BundleDeployment from a Package published before the values existed is
// Automatic).
func ApprovalOf(annotations map[string]string) Approval {
	return Approval{Manual: annotations[AnnotationUpgradeApproval] == ApprovalManual, Approved: annotations[AnnotationApprovedVersion]}
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
	Installed, Asked Entry
	Approved         string
	// Install is the PackageInstall "namespace/name" ("" unknown).
	Install string
}

func (e *HeldError) Error() string {
	version := e.Asked.PackageVersion()
	var b strings.Builder
	fmt.Fprintf(&b, "upgrade of %s held: %s waits for approval (upgradeApproval: %s), and %s stays installed", e.Installed.Package, version, ApprovalManual, e.Installed.Version)
	if e.Approved != "" {
		fmt.Fprintf(&b, " (the version approved is %s)", e.Approved)
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

// CheckApproval refuses a move from installed to asked that the
// approval a does not cover.
func CheckApproval(installed, asked Entry, a Approval, install string) error {
	if a.Covers(asked) {
		return nil
	}
	return &HeldError{Installed: installed, Asked: asked, Approved: a.Approved, Install: install}
}
