// Package controller is the adapter's dispatcher: it loads one
// BundleDeployment, finds where its App lives, decides the route from a
// pure table (route.go: skip, hand back, remove, install as an App or as a
// PackageInstall, refuse an invalid install-with), runs the route through
// the install modes it is given, and reports the status from one place
// (report.go). It also owns the per-BundleDeployment memories of the
// dispatcher (memory.go) and lets a BundleDeployment go in one place
// (finish), forgetting every memory.
//
// The modes, the content store and the Bundles of rukpak's first API are
// consumer-side interfaces (AppMode, ServeMode, DependencyWaits, Bundles), so the
// dispatcher is tested with fakes. Nothing under adapter/internal imports
// it.
//
// May import (this module): adapter/bundlefiles, adapter/contenturl,
// adapter/internal/kube, adapter/internal/memo, adapter/internal/scope,
// adapter/kappapi, adapter/status, adapter/translate, api/v1alpha1,
// api/v1alpha2.
package controller
