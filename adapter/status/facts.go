package status

import (
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Facts are what one reconcile learned about a BundleDeployment.
type Facts struct {
	// BD is the BundleDeployment as read, with the status stored so far:
	// its Installed condition and resolvedSource say what is installed.
	BD *rukpakv1alpha2.BundleDeployment
	// App is the live App after this reconcile wrote it; nil when there is
	// none (yet).
	App *kappctrlv1alpha1.App
	// Fetched is the source pinned to the content the adapter fetched and
	// handed to the App; nil when kapp-controller fetches.
	Fetched *rukpakv1alpha2.BundleSource
	// Notes say where converted objects differ from the bundle as shipped.
	Notes []string
	// Failure is what stopped the adapter before kapp-controller could
	// speak for this generation; nil when nothing did.
	Failure *Failure
	// PruneFailure says why content Secrets the App no longer reads could
	// not be removed. The install stands.
	PruneFailure string
	// Installed are the installed objects Healthy is judged by; nil when
	// they were not listed.
	Installed *Installed
	// InstalledFailure says why they could not be listed.
	InstalledFailure string
	// Now is the reconcile's clock reading.
	Now time.Time
	// Progress is what the last look at this generation's work under way
	// left for this one (Computed.Progress, kept by the caller); zero when
	// there was none.
	Progress Progress
	// TemplateTimeout is how long kapp-controller's template step may run
	// before it is reported as failed; 0 never.
	TemplateTimeout time.Duration
	// SystemNamespace holds the Secrets and ConfigMaps BundleDeployments
	// name, for messages about them; empty: the App's namespace.
	SystemNamespace string
	// ContentURL is where the content of what is installed (its
	// resolvedSource) is served; empty: it is not.
	ContentURL string
	// Package is set when the BundleDeployment installs through a
	// PackageInstall (the serve mode): App is then the PackageInstall's.
	Package *PackageFacts
}

// FailureKind says which step stopped, and so which condition tells.
type FailureKind int

const (
	// SourceFailed: the bundle's source could not be fetched (Unpacked).
	SourceFailed FailureKind = iota + 1
	// BundleInvalid: the fetched content is not a valid bundle (Installed).
	BundleInvalid
	// SpecUnsupported: the spec asks for something that cannot be done.
	SpecUnsupported
	// ControllerFailed: the adapter could not write or read what it needs
	// (the App, content Secrets); it retries with backoff.
	ControllerFailed
	// DependenciesUnmet: the bundle waits for what it declares it needs;
	// it installs as soon as the cluster offers it.
	DependenciesUnmet
	// TakeOverBlocked: what rukpak installed cannot be taken over in
	// place; nothing was changed.
	TakeOverBlocked
	// KappControllerMissing: kapp-controller's API is not installed; the
	// BundleDeployment installs as soon as it is.
	KappControllerMissing
	// DependenciesInstalling: the bundle's dependencies are being installed
	// from its catalog; it installs once they are.
	DependenciesInstalling
)

// Failure is one failure of the adapter's own steps, classified.
type Failure struct {
	Kind FailureKind
	// Message names the cause; it becomes part of a condition message.
	Message string
	// Retrying says the adapter tries again with backoff; otherwise only a
	// change of the spec or of the content ends it.
	Retrying bool
	// NextAttempt is when it tries again, where that is known (a fetch's
	// backoff, fetch.Backoff); zero otherwise.
	NextAttempt time.Time
}

// Computed is the status to store and when to look again.
type Computed struct {
	Status rukpakv1alpha2.BundleDeploymentStatus
	// WriteAfter > 0 holds a status that only reports work under way: it is
	// not written now; look again after this long (the outcome usually
	// comes first). Hold without a timer is Hold with WriteAfter 0.
	Hold       bool
	WriteAfter time.Duration
	// LookAgainAfter is when a deadline inside the status expires (the
	// template step's); 0 none.
	LookAgainAfter time.Duration
	// Progress is what this look leaves for the next one's
	// Facts.Progress.
	Progress Progress
	// Health is the installed objects' roll-up; nil when they were not
	// listed.
	Health *Health
}

// Progress is what the progress hold remembers of a generation's work
// under way between looks: since when the stored status has been behind it
// (zero: it is not), and whether an in-progress status of it was written.
type Progress struct {
	BehindSince time.Time
	Said        bool
}
