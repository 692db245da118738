// Package kappapi says whether kapp-controller's API (the App and
// PackageInstall kinds) is served, through discovery, and opens what needs
// it once it is: the adapter starts without kapp-controller, says so on
// every claimed BundleDeployment (Missing) and in its readiness, and starts
// working when the API appears, without a restart. It is a Runnable of its
// own, wired in adapter.NewManager; the BundleDeployment reconciler only asks Ready (and
// words the wait with Missing). The
// manager (adapter.NewManager) runs a second one (NewFor) for the OperatorCatalog API, which
// starts the catalog controller whenever config/catalogs is installed.
// While the API is missing it asks discovery again at each change of one of
// its CRDs or of the APIService of one of its group versions (an
// aggregated API's turns Available when kapp-controller is back), with
// backoff for two minutes (kube-apiserver serves a kind a moment after its
// CRD is established); a change seen while it asks is asked about after,
// never dropped. Discovery that fails (the aggregated packaging API
// answering 503 while kapp-controller is down) is a wait, never an error
// that stops the adapter: it is asked again with backoff until it answers,
// and the wait is said in the readiness probe's detail, the logs, the
// gauge rukpak_kapp_api_served and through OnWaiting (package adapter has the
// OperatorCatalogs say it).
//
// It owns whether the API was found.
package kappapi
