package catalog

import (
	"fmt"
	"strings"

	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
)

// The values of upgradeApproval, as the OperatorInstall names them.
const (
	ApprovalAutomatic = catalogsv1alpha1.ApprovalAutomatic
	ApprovalManual    = catalogsv1alpha1.ApprovalManual
)

// Approval is what an install says of the approval of its moves, as OLM
// v0's installPlanApproval: Manual and an InstallPlan's approval.
type Approval struct {
	// Manual holds every move to another version until it is approved.
	Manual bool
	// Approved is the version approved ("" none): the OLM version or the
	// Package's.
	Approved string
}

// ApprovalOf reads the approval from an OperatorInstall's spec, the one
// place it is said: whoever may update the OperatorInstall may approve.
func ApprovalOf(spec catalogsv1alpha1.OperatorInstallSpec) Approval {
	return Approval{Manual: spec.UpgradeApproval == ApprovalManual, Approved: spec.ApprovedVersion}
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
	// Install is the install "namespace/name" (its PackageInstall and
	// OperatorInstall share it; "" unknown).
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
	fmt.Fprintf(&b, ". See what it changes with: %s; approve exactly this version with: %s", PlanCommand(e.Install, version), ApproveCommand(e.Install, version))
	return b.String()
}

// PlanCommand is the command that shows what moving the install
// ("namespace/name"; "" unknown) to version changes.
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

// Held judges a move from installed (isInstalled false: nothing is
// installed yet) to asked under the approval a: held when a does not cover
// it. The error says why and what to do; nil: not held. Staying on the
// bundle installed is never held.
func Held(installed Entry, isInstalled bool, asked Entry, a Approval, install string) error {
	if isInstalled && installed.Bundle == asked.Bundle && installed.Package == asked.Package {
		return nil
	}
	if !isInstalled {
		installed = Entry{}
	}
	if a.Covers(asked) {
		return nil
	}
	return &HeldError{Installed: installed, Asked: asked, Approved: a.Approved, Install: install}
}
