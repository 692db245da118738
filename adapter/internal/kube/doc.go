// Package kube holds the adapter's own reads and writes that both install
// modes use: the App (read, applied with server-side apply, judged
// deployed, deleted leaving what it installed: DeleteLeaving), the
// BundleDeployment's finalizers, the copies of what an App references in
// its namespace, and the installed objects Healthy is judged by: the
// workloads from the manager's cache, and the custom resources of the
// kinds each App reports installing (CustomObjects: a cache of their own,
// one informer per kind, started by the first App that reports it and
// stopped when no install reads the kind any more, a source of the
// BundleDeployment controller). It is also every status
// write of the adapter (PatchStatus, the one patch of a status
// subresource: WriteStatus, WriteV1alpha1Status, WriteBundleStatus and the
// OperatorCatalog's ConditionsWriter), the release of rukpak's finalizer
// from a Bundle (ReleaseBundleFromRukpak), the list that has a controller
// reconcile again the objects a change concerns (EnqueueMatching), and a
// reader of what is served only later (LateReader: a cache of an
// aggregated API, set once it is served).
//
// It decides nothing about a BundleDeployment's route or content. The store,
// the modes, the BundleDeployment reconciler, rukpak's first API (v1alpha1/deployments,
// controllers/bundle) and package adapter import it, never the other way round.
package kube
