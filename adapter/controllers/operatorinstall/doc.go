// Package operatorinstall reconciles OperatorInstalls
// (api/catalogs/v1alpha1), the catalog install a catalog Package's
// template makes in its PackageInstall's namespace. An OperatorInstall is
// the one writer of one BundleDeployment (named by spec or after the
// install), which it creates, moves and deletes: the BundleDeployment
// reconciler installs what that BundleDeployment names and knows nothing
// of catalogs.
//
// A look (Reconcile) reads the install, its BundleDeployment (the
// manager's cache) and its channel as the install's namespace sees it
// (Channels: packagingapi.Packages), and leaves every decision to
// operatorinstall/plan: which bundle the BundleDeployment installs now, and
// the install's status. Then it writes, in that order, the status when the
// BundleDeployment is about to move to another bundle (status.walk and
// status.installed first, so a restart between the two writes reads the
// same), the bundle's dependencies from the catalog as PackageInstalls
// (dependencies.go), the BundleDeployment (server-side apply, field
// manager fieldowner.Name), and the status with an Event per condition
// change and one (UpgradeStep) per step of a walk. The update notice is a
// gauge and an Event on the PackageInstall (notice.go).
//
// A BundleDeployment an earlier release's template rendered (kapp's labels,
// the install's annotations) is adopted in place: a merge patch takes
// kapp's labels and the legacy annotations off, so that kapp's deploy of
// the install's App, which renders the OperatorInstall, leaves it alone,
// and nothing it installed is recreated. A BundleDeployment of the
// install's name that is neither is left alone, and the install says so.
//
// Deleting the install deletes its BundleDeployment, and with it what that
// installed (finalizer catalogs.rukpak-kapp.dev/uninstall), unless the
// install is deleted with propagation orphan: then both stay in place.
//
// It watches the installs (their own cache, opened once their API is
// served), their BundleDeployments, and, once kapp-controller's packaging
// API is served (WatchPackages, wired by adapter/catalogs.go), the catalog
// Packages' metadata: a channel that moves wakes the installs that see it,
// and the installs waiting for what a Package may offer. A gate's bound
// and a wait no watched event ends (a ServiceAccount, kapp-controller's
// next pick) are looked at again on a timer that doubles with the wait.
package operatorinstall
