// Package packagingapi is the one writer of kapp-controller's packaging
// objects, the Packages and PackageMetadata of data.packaging.carvel.dev:
// the serve mode publishes a BundleDeployment's through it, the
// OperatorCatalog controller a catalog's. Put creates what is missing and
// writes over what its caller judges changed, as the adapter's field owner
// (create and update: kapp-controller's aggregated API server stores them
// as InternalPackages and InternalPackageMetadata); every error names the
// object and, when that API server is not available, says so (Error), in
// one wording for both. It is the one reader of catalog Packages too
// (Packages): as kapp-controller's API shows them to a namespace (its own
// and the global packaging namespace's, a namespace's Package shadowing a
// global one of the same name, unless the namespace excludes the global
// ones), from a cache of their metadata indexed by channel and OLM package
// (Indexes), for a catalog bundle's dependencies, its update notice, the
// walk along its channel and the upgrade webhook, which thus see the same
// Packages and treat a Package whose image cannot be read alike; the
// upgrade plan reads kapp-controller's API itself (Channel), with the same
// rules and the same nodes.
//
// It owns nothing between calls (the cache is the manager's).
package packagingapi
