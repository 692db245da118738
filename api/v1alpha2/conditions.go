package v1alpha2

// Provisioner classes. A BundleDeployment of any other class is never touched.
const (
	ClassPlain    = "core-rukpak-io-plain"
	ClassRegistry = "core-rukpak-io-registry"
	ClassHelm     = "core-rukpak-io-helm"
)

// Labels put on the App and on every object a BundleDeployment installs.
const (
	LabelOwnerKind = "core.rukpak.io/owner-kind"
	LabelOwnerName = "core.rukpak.io/owner-name"
	OwnerKind      = "BundleDeployment"
)

// AnnotationServiceAccount names a ServiceAccount in the system namespace
// that kapp installs this BundleDeployment with, instead of the installer
// account: platform teams grant it only what the bundle needs.
const AnnotationServiceAccount = "core.rukpak.io/install-service-account"

// AnnotationSyncPeriod asks kapp-controller to re-apply this
// BundleDeployment more often than the adapter's default (a Go duration;
// kapp-controller's floor is 30s), for faster repair of drift.
const AnnotationSyncPeriod = "core.rukpak.io/sync-period"

// AnnotationPackageVersion is the version (semver) of the Carvel Package
// made of this BundleDeployment's content (`rukpak-kapp render
// --as-package`). Without it a plain bundle's version is derived from its
// content, a helm bundle's is its chart's and a registry+v1 bundle's its
// ClusterServiceVersion's.
const AnnotationPackageVersion = "core.rukpak.io/package-version"

// AnnotationInstallWith says how the adapter installs this
// BundleDeployment, whatever its --install-with flag says: "app" (an App it
// writes) or "packageinstall" (a Package it publishes, installed by a
// PackageInstall). Changing it switches the install in place.
const AnnotationInstallWith = "core.rukpak.io/install-with"

// AnnotationHealthExpressions gives CEL expressions that judge the
// installed objects of kinds that follow no convention kstatus knows, for
// the Healthy condition: a YAML list of {apiVersion, kind, inProgress,
// failed, current} (docs/bundledeployments.md, Health).
const AnnotationHealthExpressions = "core.rukpak.io/health-expressions"

// Annotations the adapter puts on each App it writes. They record what the
// App's spec was made from, so that the App's success is never read as a
// newer generation's, and so that a restarted adapter knows what content the
// App deploys without fetching it again.
const (
	// AnnotationBundleGeneration is the BundleDeployment generation.
	AnnotationBundleGeneration = "core.rukpak.io/bundle-generation"
	// AnnotationResolvedSource is the source, pinned to what the adapter
	// fetched (JSON), when the adapter fetched the content itself.
	AnnotationResolvedSource = "core.rukpak.io/resolved-source"
	// AnnotationBundleMetadata is a registry+v1 bundle's package, labels
	// and dependencies (JSON): other BundleDeployments' olm.package and
	// olm.label dependencies are met by the Apps that carry it.
	AnnotationBundleMetadata = "core.rukpak.io/bundle-metadata"
	// AnnotationRerun records the adapter's last request that
	// kapp-controller run an App again (drift repair, or a run
	// kapp-controller lost): "<generation> <time> <why>", the App's
	// generation before the request (the one its status then reported),
	// when it was made (RFC 3339) and why ("drift" or "stalled"). The
	// request itself changes only spec.paused, so while kapp-controller has
	// not picked it up the App's status still reports the same spec.
	AnnotationRerun = "core.rukpak.io/rerun"
)

// AnnotationSkipDependencyCheck on a BundleDeployment, set to "true",
// installs a registry+v1 bundle without checking its declared dependencies
// against the cluster, as rukpak v0.24.0 did.
const AnnotationSkipDependencyCheck = "core.rukpak.io/skip-dependency-check"

// Condition types.
const (
	// TypeUnpacked is True once the bundle's content was fetched.
	TypeUnpacked = "Unpacked"
	// TypeHasValidBundle is kept from rukpak; rukpak-kapp does not set it.
	TypeHasValidBundle = "HasValidBundle"
	// TypeInstalled is True once every object of the bundle was applied.
	TypeInstalled = "Installed"
	// TypeHealthy is True while the installed objects are ready.
	TypeHealthy = "Healthy"
)

// Condition reasons. rukpak's names are kept wherever rukpak had the state.
const (
	// ReasonUnpackPending is set while kapp-controller has not yet fetched the current spec.
	ReasonUnpackPending = "UnpackPending"
	// ReasonUnpacking is set while the fetch of the current spec runs.
	ReasonUnpacking = "Unpacking"
	// ReasonUnpackSuccessful is set when the fetch succeeded.
	ReasonUnpackSuccessful = "UnpackSuccessful"
	// ReasonUnpackFailed is set when the fetch failed.
	ReasonUnpackFailed = "UnpackFailed"

	// ReasonInstallationSucceeded is set when the bundle was deployed.
	ReasonInstallationSucceeded = "InstallationSucceeded"
	// ReasonInstallFailed is set when templating or a first deploy failed.
	ReasonInstallFailed = "InstallFailed"
	// ReasonUpgradeFailed is set when a deploy failed after an earlier one succeeded.
	ReasonUpgradeFailed = "UpgradeFailed"
	// ReasonErrorGettingReleaseState is set (Installed=False) when the
	// bundle names an API the cluster does not serve (a custom resource
	// whose CRD is not installed): rukpak's reason for the same cause,
	// found by its dry-run before it installed.
	ReasonErrorGettingReleaseState = "ErrorGettingReleaseState"
	// ReasonDependenciesUnmet is set (Installed=False) while a registry+v1
	// bundle's declared dependencies are not met in the cluster.
	ReasonDependenciesUnmet = "DependenciesUnmet"
	// ReasonTakeOverBlocked is set (Installed=False) when what rukpak
	// installed for the BundleDeployment cannot be taken over in place.
	ReasonTakeOverBlocked = "TakeOverBlocked"
	// ReasonKappControllerMissing is set (Installed=False) while
	// kapp-controller's API is not installed in the cluster.
	ReasonKappControllerMissing = "KappControllerMissing"
	// ReasonInstallPending is set (Installed=Unknown) before kapp-controller ran the deploy for the current spec.
	ReasonInstallPending = "InstallPending"
	// ReasonInstalling is set (Installed=Unknown) while kapp applies and waits.
	ReasonInstalling = "Installing"
	// ReasonDeleting is set while the installed objects are being removed.
	ReasonDeleting = "Deleting"
	// ReasonDeleteFailed is set when removing the installed objects failed.
	ReasonDeleteFailed = "DeleteFailed"

	// ReasonHealthy is set when the deploy converged and everything is ready.
	ReasonHealthy = "Healthy"
	// ReasonUnhealthy is set when installed objects are not ready: in
	// progress (a rollout, a custom resource whose Ready is False).
	ReasonUnhealthy = "Unhealthy"
	// ReasonObjectFailed is set (Healthy=False) when an installed object is
	// Failed (kstatus: Stalled, a rollout past its deadline), being deleted
	// or gone: what no wait ends.
	ReasonObjectFailed = "ObjectFailed"
	// ReasonInstallationStatusFalse is set on Healthy while Installed is False.
	ReasonInstallationStatusFalse = "InstallationStatusFalse"
	// ReasonInstallationStatusUnknown is set on Healthy while Installed is not yet known.
	ReasonInstallationStatusUnknown = "InstallationStatusUnknown"
	// ReasonHealthUnknown is set (Healthy=Unknown) when every installed
	// object judged is Current but some, or some kinds, cannot be judged:
	// a custom resource with no Ready condition, or a kind the adapter
	// may not read.
	ReasonHealthUnknown = "HealthUnknown"
	// ReasonHealthCheckFailed is set (Healthy=Unknown) when the installed objects could not be read.
	ReasonHealthCheckFailed = "HealthCheckFailed"
)
