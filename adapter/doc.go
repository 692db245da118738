// Package adapter reconciles BundleDeployments into kapp-controller Apps and
// mirrors the Apps' status back. It is the facade cmd/ and test/ use: the
// manager (manager.go), which wires the dispatcher and the parts that run
// beside it, and the names forwarded from the packages that own them
// (docs/architecture.md draws the data path). Its packages are in tiers,
// from the top: the dispatcher with what it drives (adapter/internal) and
// rukpak's first API (adapter/v1alpha1); servers (adapter/servers) and the
// controllers beside the dispatcher (adapter/controllers); the pure
// packages (adapter/translate, adapter/status, ...) and downloads
// (adapter/fetch). docs/architecture.md's table places each package.
// A package imports only lower tiers and, within its own, what its doc.go
// declares (adapter/layering_test.go). Every package under it:
//
// The dispatcher and what it drives (adapter/internal):
//
//	internal/controller  the dispatcher: load, route, run, report
//	internal/appmode     an App; take-over of rukpak; hand-back; removal
//	internal/servemode   a Package and PackageInstall; leaving the mode
//	internal/offline     render, render --as-package, the take-over's input, an upgrade's plan
//	internal/store       what the adapter fetches itself: Materialize, content Secrets, deps
//	internal/kube        the App, finalizers, the status writers, mirrors, workloads
//	internal/scope       one reconcile's Scope and Outcome; error classes
//	internal/memo        the keyed memory every per-BundleDeployment memory is
//
// rukpak's first API (adapter/v1alpha1):
//
//	v1alpha1/deployments            its BundleDeployments, behind the dispatcher's Bundles seam
//	v1alpha1/deployments/templates  which Bundle a template asks for; v1alpha1 statuses (pure)
//	v1alpha1/bundles                the controller of Bundles on their own; what contentURLs serve
//	v1alpha1/bundles/plan           what a Bundle on its own does and says (pure)
//
// Servers and the controllers beside the dispatcher, wired in manager.go
// (adapter/servers, adapter/controllers):
//
//	servers/webhook           the webhook server and its certificates
//	servers/versions          the v1alpha1 <-> v1alpha2 conversion webhook
//	servers/crdsafety         the CRD upgrade safety webhook
//	servers/catalogedges      catalog upgrades only along the channel's edges
//	servers/contenturl        contentURLs: paths, the tarballs kept, the HTTPS handler
//	controllers/kappapi       whether kapp-controller's API is served; opens the watches that need it
//	controllers/drift         re-apply after a change by hand; a new run when kapp-controller lost one
//	controllers/chartcrds     a chart's crds/ as Helm keeps them
//	controllers/catalogs      OperatorCatalogs: a catalog image followed and published as Packages
//	controllers/kappconfig    kapp-controller-config's CAs and proxies, for the adapter's own fetches
//	controllers/packagingapi  the one writer of Packages and PackageMetadata (serve mode, catalogs)
//
// Below everything, pure but for fetch's downloads (the packages named
// for what they compute, and adapter/fetch):
//
//	fetch, fetch/unpack  registries, git, http; untar within the unpack root
//	bundlefiles          a bundle's files laid out for the App
//	content              files packed into immutable Secrets
//	translate            the App
//	packaging            the Package, PackageMetadata and PackageInstall
//	catalog              an OLM catalog as Carvel packages; its upgrade edges
//	takeover             rukpak's release taken over in place
//	status               the conditions, computed
//	fieldowner           the adapter's field manager
//
// (and convert, at the repository root: registry+v1 to plain manifests).
//
// It owns no memory of its own; only cmd/ and test/ import it.
//
// May import (this module): adapter/controllers/catalogs, adapter/controllers/chartcrds, adapter/servers/catalogedges,
// adapter/servers/contenturl, adapter/servers/crdsafety, adapter/controllers/drift, adapter/fetch, adapter/catalog, adapter/fieldowner,
// adapter/internal/appmode, adapter/internal/controller,
// adapter/internal/kube, adapter/internal/offline, adapter/internal/scope,
// adapter/internal/servemode, adapter/internal/store, adapter/controllers/kappapi, adapter/controllers/kappconfig, adapter/controllers/packagingapi,
// adapter/takeover, adapter/translate, adapter/v1alpha1/bundles,
// adapter/v1alpha1/deployments, adapter/v1alpha1/deployments/templates,
// adapter/servers/versions, adapter/servers/webhook, api/catalogs/v1alpha1, api/v1alpha1, api/v1alpha2.
package adapter
