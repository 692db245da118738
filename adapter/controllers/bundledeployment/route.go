package bundledeployment

import (
	"fmt"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Route is what one reconcile does with a BundleDeployment.
type Route int

const (
	// Skip: not the adapter's (another class, or being deleted) and no
	// finalizer of the adapter's on it.
	Skip Route = iota
	// HandBack: the class is no longer claimed but the adapter still holds
	// its finalizer; the App mode releases what it installed, in place.
	HandBack
	// Remove: being deleted with the adapter's finalizer: the serve mode's
	// PackageInstall goes first, then the App.
	Remove
	// InstallApp: claimed, installed as an App (leaving the serve mode first).
	InstallApp
	// InstallServe: claimed, installed as a PackageInstall.
	InstallServe
	// InstallInvalid: claimed, but its install-with annotation names no mode.
	InstallInvalid
)

func (r Route) String() string {
	return [...]string{"skip", "hand back", "remove", "install as an App", "install as a PackageInstall", "refuse the install-with annotation"}[r]
}

// Installs says the route installs: the finalizer is added, the template's
// Bundle made, and the status reported with the installing policy.
func (r Route) Installs() bool {
	return r == InstallApp || r == InstallServe || r == InstallInvalid
}

// Situation is what the route is decided from: whether the class is
// claimed, the BundleDeployment deleted, the finalizer held, and the mode.
type Situation struct {
	Claimed, Deleting, HasFinalizer bool
	Mode                            scope.InstallWith
	// ModeInvalid says the install-with annotation names no mode.
	ModeInvalid bool
}

// Decide is the route for facts. A class change wins over a deletion: what
// the adapter hands back is never deleted by it.
func Decide(f Situation) Route {
	switch {
	case !f.Claimed && f.HasFinalizer:
		return HandBack
	case !f.Claimed:
		return Skip
	case f.Deleting && f.HasFinalizer:
		return Remove
	case f.Deleting:
		return Skip
	case f.ModeInvalid:
		return InstallInvalid
	case f.Mode == scope.InstallWithPackageInstall:
		return InstallServe
	}
	return InstallApp
}

// installWith is bd's mode: its annotation, else the adapter's default.
func installWith(bd *rukpakv1alpha2.BundleDeployment, def scope.InstallWith) (scope.InstallWith, error) {
	v, ok := bd.Annotations[rukpakv1alpha2.AnnotationInstallWith]
	if !ok {
		if def == "" {
			return scope.InstallWithApp, nil
		}
		return def, nil
	}
	m, err := scope.ParseInstallWith(v)
	if err != nil {
		return "", &translate.UnsupportedError{Reason: fmt.Sprintf("annotation %s: %v", rukpakv1alpha2.AnnotationInstallWith, err)}
	}
	return m, nil
}
