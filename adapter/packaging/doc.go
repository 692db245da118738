// Package packaging makes the Carvel packaging objects that install a
// BundleDeployment's content through kapp-controller's PackageInstall
// reconciler: a Package per content version, its PackageMetadata, a values
// Secret and the PackageInstall (and, when asked, the installer's
// ServiceAccount bound to cluster-admin). It has no client and no clock.
//
// It owns nothing between calls.
package packaging
