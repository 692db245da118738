// Package adapter reconciles BundleDeployments into kapp-controller Apps and
// mirrors the Apps' status back. It is the facade cmd/ and test/ use: the
// manager (manager.go) and the names below, forwarded from the packages
// that own them under adapter/internal (docs/architecture.md draws the
// data path):
//
//	internal/controller  the dispatcher: load, place, route, report
//	internal/appmode     an App; take-over of rukpak; hand-back; removal
//	internal/servemode   a Package and PackageInstall; export
//	internal/store       what the adapter fetches itself: content Secrets, deps
//	internal/kube        the App, finalizers, status, mirrors, workloads
//	internal/firstapi   v1alpha1's generated Bundles
//	internal/scope       one reconcile's facts; error classes
//
// below them the pure packages: fetch, bundle, content, translate,
// packaging, takeover, status, drift (and convert at the repository root).
//
// It owns no memory of its own and may import every package of the adapter and api/; only cmd/ and
// test/ import it.
package adapter
