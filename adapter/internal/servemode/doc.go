// Package servemode installs a BundleDeployment as a Carvel package (the
// serve mode, --install-with=packageinstall): its content is published as
// a Package with its PackageMetadata (and a values Secret for a chart) and
// installed by a PackageInstall in the App's namespace, whose App is the App
// mode's App, so switching modes keeps every installed object. It also
// leaves the serve mode (Leave: before the App mode writes its App) and
// removes a served BundleDeployment (Finalize); the export of packages
// without a cluster is internal/offline's.
//
// It owns what it remembers to keep an idle install from reading the
// packaging API (Forget drops it). It never imports the App mode or the
// BundleDeployment reconciler.
package servemode
