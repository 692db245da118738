// Package adapter reconciles BundleDeployments into kapp-controller Apps and
// mirrors the Apps' status back. It is the facade cmd/ and test/ use: the
// manager (manager.go), which wires the dispatcher and the parts that run
// beside it, and the names forwarded from the packages that own them
// (docs/architecture.md draws the data path). Its folders are its tiers,
// from the top: the dispatcher with what it drives and rukpak's first API;
// servers and the parts beside the dispatcher; pure packages and downloads.
// A package imports only lower tiers and, within its own, what its doc.go
// declares (adapter/layering_test.go). Every package under it:
//
// The dispatcher and what it drives (adapter/internal):
//
//	internal/controller  the dispatcher: load, route, run, report
//	internal/appmode     an App; take-over of rukpak; hand-back; removal
//	internal/servemode   a Package and PackageInstall; leaving the mode
//	internal/offline     render, render --as-package, the take-over's input
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
// Servers and the parts beside the dispatcher, wired in manager.go
// (adapter/servers, adapter/beside):
//
//	servers/webhook     the webhook server and its certificates
//	servers/versions    the v1alpha1 <-> v1alpha2 conversion webhook
//	servers/crdsafety   the CRD upgrade safety webhook
//	servers/catalogedges  catalog upgrades only along the channel's edges
//	servers/contenturl  contentURLs: paths, the tarballs kept, the HTTPS handler
//	beside/kappapi      whether kapp-controller's API is served; opens the watches that need it
//	beside/drift        re-apply after a change by hand; a new run when kapp-controller lost one
//	beside/chartcrds    a chart's crds/ as Helm keeps them
//	beside/catalogs     OperatorCatalogs: a catalog image followed and published as Packages
//	beside/kappconfig   kapp-controller-config's CAs and proxies, for the adapter's own fetches
//	beside/packagingapi the one writer of Packages and PackageMetadata (serve mode, catalogs)
//
// Below everything, pure but for fetch's downloads (adapter/pure,
// adapter/fetch):
//
//	fetch, fetch/unpack  registries, git, http; untar within the unpack root
//	pure/bundlefiles     a bundle's files laid out for the App
//	pure/content         files packed into immutable Secrets
//	pure/translate       the App
//	pure/packaging       the Package, PackageMetadata and PackageInstall
//	pure/catalog         an OLM catalog as Carvel packages; its upgrade edges
//	pure/takeover        rukpak's release taken over in place
//	pure/status          the conditions, computed
//	pure/fieldowner      the adapter's field manager
//
// (and convert, at the repository root: registry+v1 to plain manifests).
//
// It owns no memory of its own; only cmd/ and test/ import it.
//
// May import (this module): adapter/beside/catalogs, adapter/beside/chartcrds, adapter/servers/catalogedges,
// adapter/servers/contenturl, adapter/servers/crdsafety, adapter/beside/drift, adapter/fetch, adapter/pure/catalog, adapter/pure/fieldowner,
// adapter/internal/appmode, adapter/internal/controller,
// adapter/internal/kube, adapter/internal/offline, adapter/internal/scope,
// adapter/internal/servemode, adapter/internal/store, adapter/beside/kappapi, adapter/beside/kappconfig, adapter/beside/packagingapi,
// adapter/pure/takeover, adapter/pure/translate, adapter/v1alpha1/bundles,
// adapter/v1alpha1/deployments, adapter/v1alpha1/deployments/templates,
// adapter/servers/versions, adapter/servers/webhook, api/catalogs/v1alpha1, api/v1alpha1, api/v1alpha2.
package adapter
