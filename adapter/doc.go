// Package adapter reconciles BundleDeployments into kapp-controller Apps and
// mirrors the Apps' status back. It is the facade cmd/ and test/ use: the
// manager (manager.go), which wires the dispatcher and the parts that run
// beside it, and the names forwarded from the packages that own them
// (docs/architecture.md draws the data path). Every package under it:
//
// The dispatcher and what it drives (adapter/internal):
//
//	internal/controller  the dispatcher: load, route, run, report
//	internal/appmode     an App; take-over of rukpak; hand-back; removal
//	internal/servemode   a Package and PackageInstall; leaving the mode; export
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
// Beside the dispatcher, wired in manager.go:
//
//	kappapi     whether kapp-controller's API is served; opens the watches that need it
//	drift       re-apply after a change by hand; a new run when kapp-controller lost one
//	chartcrds   a chart's crds/ as Helm keeps them
//	crdsafety   the CRD upgrade safety webhook
//	versions    the v1alpha1 <-> v1alpha2 conversion webhook
//	webhook     the webhook server and its certificates
//	contenturl  contentURLs: paths, the tarballs kept, the HTTPS handler
//
// Below everything, pure but for fetch's downloads:
//
//	fetch, fetch/unpack  registries, git, http; untar within the unpack root
//	bundlefiles          a bundle's files laid out for the App
//	content              files packed into immutable Secrets
//	translate            the App
//	packaging            the Package, PackageMetadata and PackageInstall
//	takeover             rukpak's release taken over in place
//	status               the conditions, computed
//	fieldowner           the adapter's field manager
//
// (and convert, at the repository root: registry+v1 to plain manifests).
//
// It owns no memory of its own; only cmd/ and test/ import it.
//
// May import (this module): adapter/chartcrds, adapter/contenturl,
// adapter/crdsafety, adapter/drift, adapter/fetch, adapter/fieldowner,
// adapter/internal/appmode, adapter/internal/controller,
// adapter/internal/kube, adapter/internal/offline, adapter/internal/scope,
// adapter/internal/servemode, adapter/internal/store, adapter/kappapi,
// adapter/takeover, adapter/translate, adapter/v1alpha1/bundles,
// adapter/v1alpha1/deployments, adapter/v1alpha1/deployments/templates,
// adapter/versions, adapter/webhook, api/v1alpha1, api/v1alpha2.
package adapter
