// Package packagingapi is the one writer of kapp-controller's packaging
// objects, the Packages and PackageMetadata of data.packaging.carvel.dev:
// the serve mode publishes a BundleDeployment's through it, the
// OperatorCatalog controller a catalog's. Put creates what is missing and
// writes over what its caller judges changed, as the adapter's field owner
// (create and update: kapp-controller's aggregated API server stores them
// as InternalPackages and InternalPackageMetadata); every error names the
// object and, when that API server is not available, says so (Error), in
// one wording for both. It is the one reader of a catalog channel's graph
// too (Channel), for the walk along it and the upgrade webhook, which thus
// treat a Package whose image cannot be read alike.
//
// It owns nothing between calls.
//
// May import (this module): adapter/catalog, adapter/fieldowner.
package packagingapi
