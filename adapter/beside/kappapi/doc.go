// Package kappapi says whether kapp-controller's API (the App and
// PackageInstall kinds) is served, through discovery, and opens what needs
// it once it is: the adapter starts without kapp-controller, says so on
// every claimed BundleDeployment (Missing) and in its readiness, and starts
// working when the API appears, without a restart. It is a Runnable of its
// own, wired in the facade's manager; the dispatcher only asks Ready (and
// words the wait with Missing). The
// facade runs a second one (NewFor) for the OperatorCatalog API, which
// starts the catalog controller whenever config/catalogs is installed.
// While the API is missing it asks discovery again at each change of one of
// its CRDs, with backoff for two minutes (kube-apiserver serves a kind a
// moment after its CRD is established); a change seen while it asks is
// asked about after, never dropped.
//
// It owns whether the API was found.
//
// May import (this module): nothing.
package kappapi
