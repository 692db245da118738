// Package operatorcatalog follows OperatorCatalogs (api/catalogs/v1alpha1): each
// names an OLM catalog image, which the controller looks up every poll
// interval (a registry cannot be watched) with the pull secret the catalog
// names, and, when its digest is new, streams into a file on disk
// (fetch.SpoolCatalogImage) and publishes a package at a time in the
// OperatorCatalog's namespace as Carvel packages (adapter/catalog)
// through kapp-controller's packaging API. A publication creates what is
// new and updates what changed (an object's hash annotation says whether it
// did). Once a digest is published whole, what an earlier one published
// and this one no longer holds is retracted (retract.go): deleted when no
// install runs it (an OperatorInstall's status.installed, the bundle its
// BundleDeployment names, or a BundleDeployment of no install naming the
// entry), else kept, marked catalog.AnnotationRetracted, until none does
// (an install or BundleDeployment that leaves it wakes the catalog), so
// that an install keeps the version it runs and nothing else moves to it. A Package another
// OperatorCatalog publishes is left to it (Conflict). Deleting the
// OperatorCatalog withdraws exactly what it published.
//
// It watches the metadata of what catalogs published (their label) and
// writes again, from the catalog file, what was deleted or edited by hand,
// or released by the catalog that kept it, during a publication too (what
// the watch saw change is checked at its end); the counts are of what is in
// place, and an object the packaging API refuses is a refusal of its own
// while the rest is written, tried again on a backoff of its own; an
// answer that may pass by itself (a conflict, throttling, a timeout, a
// server error) is no refusal (WriteFailed, retried with backoff). While
// the packaging API is not served the controller does not run, and
// ReportWaiting (called by adapter.NewManager) says so on every OperatorCatalog;
// once it runs, Served follows the API for the whole run: a watch or a
// write that finds it not available, or a probe (made while catalogs
// exist) that gets no answer in time, starts an outage, which every
// OperatorCatalog says (PackagingAPIUnavailable) until the probe, made
// with backoff that goes on across outages close together, answers
// again, and every catalog is published again. A catalog's tag is looked
// up at its poll and when its spec changes only. A reconcile reads, runs its steps
// (finalizer, look-up, publication or repair), then writes the status once
// through the adapter's status writer (kube.ConditionsWriter, given by the
// manager (adapter.NewManager), which starts the controller with a cache of its own once its APIs
// are served). Its memory between reconciles: each catalog's publication
// (the objects, their resourceVersions, the catalog file), the backoff of a
// registry that failed and the digest that held no readable catalog
// (fetch.Backoff), each refused object's backoff, each catalog's last
// look-up of its tag, and the outage under way with its backoff (Served).
package operatorcatalog
