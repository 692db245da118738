package scope

import (
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Scope is one reconcile of one BundleDeployment, filled once by the
// BundleDeployment reconciler's load step before any route runs and handed down, so no step
// looks a per-reconcile fact up again. No field is assigned after load;
// the steps add what they learn to Facts.
type Scope struct {
	// BD is the BundleDeployment as read; its status is written back to it.
	BD *rukpakv1alpha2.BundleDeployment
	// View is BD as the translation sees it: an alias class replaced by the
	// built-in class it stands for (BD itself when there is no alias).
	View *rukpakv1alpha2.BundleDeployment
	// Mode is how BD is installed (its annotation, else the default); ""
	// when the annotation names no mode.
	Mode InstallWith
	// AppNS is the namespace of BD's App (and of its PackageInstall, content
	// and copies of what it references).
	AppNS string
	// Cfg is the translation's configuration for BD's App.
	Cfg translate.Config
	// Live is BD's App as it was read at the start of the steps; nil when
	// there is none.
	Live *kappctrlv1alpha1.App
	// Facts are what the steps learn for the status.
	Facts *status.Facts
	// Generated is set for a BundleDeployment of rukpak's first API: its
	// generated Bundles.
	Generated *Generated
	// Now is the reconcile's clock reading.
	Now time.Time
}

// Outcome is what a route's run hands back to the BundleDeployment reconciler's report: Err
// stops progress; Retry is a failure alongside a working install (prune,
// workloads) that is reported and retried; Timer is when the
// BundleDeployment needs looking at without any event (0: never).
type Outcome struct {
	Timer      time.Duration
	Err, Retry error
	// Failure is a stop that is no error: the install waits for something
	// outside the adapter (kapp-controller's API), reported and not
	// retried; its arrival wakes the BundleDeployment. Err wins over it.
	Failure *status.Failure
}

// Earliest is the sooner of two RequeueAfter values, where 0 means never.
func Earliest(a, b time.Duration) time.Duration {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}
