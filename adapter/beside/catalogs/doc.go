// Package catalogs follows OperatorCatalogs (api/catalogs/v1alpha1): each
// names an OLM catalog image, which the controller looks up every poll
// interval (a registry cannot be watched) and, when its digest is new,
// pulls and publishes in the OperatorCatalog's namespace as Carvel packages
// (adapter/pure/catalog) through kapp-controller's packaging API. A
// publication creates what is new and updates what changed, and never
// withdraws a Package: a PackageInstall keeps the version it installed when
// the catalog drops it. Deleting the OperatorCatalog withdraws everything
// it published.
//
// It runs beside the reconciler (wired in the facade's manager, when the
// catalog API is installed, which gives it the adapter's status writer,
// kube.ConditionsWriter). What was published last is in the
// OperatorCatalog's status; its one memory between reconciles is the
// backoff of a registry that failed and the digest that held no readable
// catalog (fetch.Backoff).
//
// May import (this module): adapter/fetch, adapter/pure/catalog,
// adapter/pure/fieldowner, api/catalogs/v1alpha1.
package catalogs
