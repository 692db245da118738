package status

import (
	"strings"
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
	// Walk is set while a catalog BundleDeployment walks its channel to
	// the bundle asked for (and on the look that reports its end); nil
	// otherwise.
	Walk *Walk
	// Channel is set for a catalog BundleDeployment (made by a catalog
	// Package's template): what its channel publishes. nil for any other.
	Channel *Channel
	// Hold is set when the version the generation asks for is held: the
	// App installs the version installed, or is left as it is.
	Hold *Hold
	// Package is set when the BundleDeployment installs through a
	// PackageInstall (the serve mode): App is then the PackageInstall's.
	Package *PackageFacts
}

// Walk is a catalog install moving along its channel one edge at a time.
type Walk struct {
	// Channel names the channel.
	Channel string
	// Versions is the path, the version installed when the walk started
	// first and the one asked for last.
	Versions []string
	// Step indexes Versions: the version the App installs now.
	Step int
	// Package names the Package of the step ("namespace/name"), which the
	// step's Event relates to.
	Package string
	// Gate is set when the step is deployed but its installed objects are
	// not all Current: the next step waits, or the walk stopped.
	Gate *WalkGate
}

// WalkGate is what holds a walk at a deployed step: its objects' health.
type WalkGate struct {
	// Stopped says the walk stops here (an object Failed, or InProgress
	// past the bound); else it waits.
	Stopped bool
	// Why names the objects and their states (Health.Message).
	Why string
	// Deadline is when a wait stops the walk; zero once stopped.
	Deadline time.Time
}

func (w *Walk) final() bool { return w.Step == len(w.Versions)-1 }

// path is the walk for a message: "1.0.0 → 1.1.1 → 1.1.2".
func (w *Walk) path() string { return strings.Join(w.Versions, " → ") }

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
