// Package adapter reconciles BundleDeployments into kapp-controller Apps and
// mirrors the Apps' status back. It is the facade cmd/ and test/ use: the
// manager (manager.go), which wires the dispatcher and the parts that run
// beside it, and the names below, forwarded from the packages that own
// them under adapter/internal (docs/architecture.md draws the data path):
//
//	internal/controller  the dispatcher: load, route, run, report
//	internal/appmode     an App; take-over of rukpak; hand-back; removal
//	internal/servemode   a Package and PackageInstall; leaving the mode; export
//	internal/store       what the adapter fetches itself: Materialize, content Secrets, deps
//	v1alpha1/deployments    rukpak's first API (v1alpha1) behind the Bundles seam
//	internal/kube        the App, finalizers, the status write, mirrors, workloads
//	internal/scope       one reconcile's Scope and Outcome; error classes
//	internal/memo        the keyed memory every per-BundleDeployment memory is
//
// Beside the dispatcher run kappapi, drift, chartcrds, crdsafety, versions
// and webhook; below everything the pure packages: fetch, bundlefiles,
// content, translate, packaging, takeover, status, generated (and convert
// at the repository root).
//
// It owns no memory of its own; only cmd/ and test/ import it.
//
// May import (this module): adapter/chartcrds, adapter/contenturl,
// adapter/crdsafety, adapter/drift, adapter/fetch, adapter/fieldowner,
// adapter/v1alpha1/deployments/templates, adapter/internal/appmode, adapter/internal/controller,
// adapter/v1alpha1/deployments, adapter/internal/kube,
// adapter/internal/offline, adapter/internal/scope,
// adapter/internal/servemode, adapter/internal/store,
// adapter/v1alpha1/bundles, adapter/kappapi, adapter/takeover,
// adapter/translate, adapter/versions, adapter/webhook, api/v1alpha1,
// api/v1alpha2.
package adapter
