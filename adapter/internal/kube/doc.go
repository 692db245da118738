// Package kube holds the adapter's own reads and writes that both install
// modes use: the App (read, applied with server-side apply, judged
// deployed), the BundleDeployment's finalizers and status, the copies of
// what an App references in its namespace, and the installed workloads.
//
// It decides nothing about a BundleDeployment's route or content. It may
// import scope and the pure packages (status, translate, bundlefiles); the store,
// the modes and the dispatcher import it, never the other way round.
package kube
