// Package store is what the adapter fetches itself, whatever the install
// mode: a bundle's source is fetched (Fetcher) and laid out for the App
// (Materialize: bundlefiles.Lay, with the webhook certificates it keeps),
// packed into immutable content Secrets named by their content,
// remembered by name (a bounded cache, recovered from the App after a
// restart) and, for registry+v1 bundles, checked against the dependencies
// the bundle declares (with the set of BundleDeployments waiting for them,
// each with the API groups and packages it waits for: a CRD, an
// APIService or an App (DependentsOf), to only the ones it may meet);
// its Unmet is what the OperatorInstall controller checks a catalog
// bundle's requirements with, before it installs them from the catalog.
//
// It owns the content cache, the waiting set and the backoff of the
// fetches that failed (fetch.Backoff); the image digests are the fetcher's
// (fetch.DigestCache, handed to SourceFetcher). Forget drops what it
// remembers of one BundleDeployment. Offline, the modes, the Bundle
// controller (adapter/controllers/bundle) and package adapter import it; the BundleDeployment reconciler
// knows it only through its DependencyWaits seam.
package store
