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
	if a.Approved == "" {
		return false
	}
	v, err := PackageVersion(e.Version)
	return a.Approved == e.Version || (err == nil && a.Approved == v)
}

// HeldError is a move to a version no approval covers.
type HeldError struct {
	Installed, Asked Entry
	Approved         string
	// Install is the PackageInstall "namespace/name" ("" unknown).
	Install string
}

func (e *HeldError) Error() string {
	version, err := PackageVersion(e.Asked.Version)
	if err != nil {
		version = e.Asked.Version
	}
	var b strings.Builder
	fmt.Fprintf(&b, "upgrade of %s held: %s waits for approval (upgradeApproval: %s), and %s stays installed", e.Installed.Package, version, ApprovalManual, e.Installed.Version)
	if e.Approved != "" {
		fmt.Fprintf(&b, " (the version approved is %s)", e.Approved)
	}
	ns, name, ok := strings.Cut(e.Install, "/")
	if !ok {
		ns, name = "NAMESPACE", "NAME"
	}
	fmt.Fprintf(&b, ". See what it changes with: rukpak-kapp upgrade plan %s -n %s --to %s; approve exactly this version with: "+
		"kctrl package installed update -n %s -i %s --values-file FILE, FILE holding the install's values and approvedVersion: %q",
		name, ns, version, ns, name, version)
	return b.String()
}

// CheckApproval refuses a move from installed to asked that the
// approval a does not cover.
func CheckApproval(installed, asked Entry, a Approval, install string) error {
	if a.Covers(asked) {
		return nil
	}
	return &HeldError{Installed: installed, Asked: asked, Approved: a.Approved, Install: install}
}
