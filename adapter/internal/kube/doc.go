// Package kube holds the adapter's own reads and writes that both install
// modes use: the App (read, applied with server-side apply, judged
// deployed), the BundleDeployment's finalizers and status, the copies of
// what an App references in its namespace, and the installed workloads.
//
// It decides nothing about a BundleDeployment's route or content. The store,
// the modes and the dispatcher import it, never the other way round.
//
// May import (this module): adapter/pure/bundlefiles, adapter/pure/fieldowner,
// adapter/internal/scope, adapter/pure/status, adapter/pure/takeover, api/v1alpha1,
// api/v1alpha2.
package kube
