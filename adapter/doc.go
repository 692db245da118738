// Package adapter reconciles BundleDeployments into kapp-controller Apps and
// mirrors the Apps' status back. It is what cmd/ and test/ import: the
// manager (manager.go: NewManager, Options, Scheme), which adds every
// controller and webhook to one controller-runtime manager; the
// BundleDeployment reconciler wired with both install modes
// (reconciler.go); the offline renders of the CLI (render.go); and the
// names of what the adapter writes (names.go); the catalog controllers
// and the caches they need, started once their APIs are served
// (catalogs.go).
//
// docs/architecture.md draws the data path and its map places every
// package of the module in a tier; an import goes only to a lower tier
// (docs/layering_test.go). Under adapter/:
//
//	controllers/bundledeployment  the BundleDeployment reconciler: load, route, run, report
//	controllers/bundle            rukpak's first API's Bundles on their own; what contentURLs serve
//	controllers/bundle/plan       what a Bundle on its own does and says (no client)
//	controllers/operatorcatalog   OperatorCatalogs: a catalog image published as Packages
//	controllers/operatorinstall   OperatorInstalls: a catalog install resolved, walked, held, reported
//	controllers/operatorinstall/plan what an OperatorInstall does and says (no client)
//	controllers/drift             re-apply after a change by hand; a new run when kapp-controller lost one
//	controllers/kappconfig        kapp-controller-config's CAs and proxies, for the adapter's own fetches
//	controllers/chartcrds         a chart's crds/ as Helm keeps them
//	webhooks                      the webhook server and its certificates
//	webhooks/conversion           the v1alpha1 <-> v1alpha2 conversion webhook
//	webhooks/crdsafety            the CRD upgrade safety webhook
//	webhooks/ownership            an OperatorInstall's BundleDeployment changed only through it
//	contenturl                    contentURLs: paths, the tarballs kept, the HTTPS handler
//	upgradeplan                   an upgrade's plan, read from the cluster (rukpak-kapp upgrade plan)
//	internal/appmode              an App; take-over of rukpak; hand-back; removal
//	internal/servemode            a Package and PackageInstall; leaving the mode
//	internal/offline              render and render --as-package, without a cluster
//	internal/store                what the adapter fetches itself: Materialize, content Secrets, deps
//	internal/kube                 the App, finalizers, the status writers, mirrors, workloads
//	internal/scope                one reconcile's Scope and Outcome; error classes
//	internal/memo                 the keyed memory every per-BundleDeployment memory is
//	internal/kappapi              whether kapp-controller's API is served; opens what needs it
//	packagingapi                  the one writer and reader of Packages and PackageMetadata
//	v1alpha1/deployments          rukpak's first API's BundleDeployments, behind the Bundles seam
//	v1alpha1/deployments/templates which Bundle a template asks for; v1alpha1 statuses (no client)
//	fetch, fetch/unpack           registries, git, http; untar within the unpack root
//	bundlefiles                   a bundle's files laid out for the App
//	content                       files packed into immutable Secrets
//	translate                     the App
//	packaging                     the Package, PackageMetadata and PackageInstall
//	catalog                       an OLM catalog as Carvel packages; its upgrade edges
//	takeover                      rukpak's release taken over in place
//	status                        the conditions, computed
//	fieldowner                    the adapter's field manager
//
// The packages from bundlefiles to fieldowner, templates, bundle/plan and
// operatorinstall/plan have no client and no clock: API types and bytes in, API types and bytes
// out. It owns no memory of its own.
package adapter
