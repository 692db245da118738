// Package bundledeployment is the BundleDeployment reconciler, in three phases: load
// reads one BundleDeployment and what it needs (where its App lives, the
// route from a table in route.go: skip, hand back, remove, install as
// an App or as a PackageInstall, refuse an invalid install-with; for a
// catalog BundleDeployment that walks its channel, the step to install, and
// for one whose version is held (no approval, or retracted), the version
// installed or nothing, in walk.go; for any catalog BundleDeployment, what its channel publishes, in
// notice.go) and writes nothing; run takes the route's steps in order (run.go: prepare
// what load found missing, then the install modes it is given); report
// writes the status once, from one place (report.go), and a catalog
// install's upgrade notice as an Event on its PackageInstall and a gauge
// (notice.go). It also owns the per-BundleDeployment memories of the
// BundleDeployment reconciler (memory.go) and lets a BundleDeployment go in one place
// (finish), forgetting every memory.
//
// The modes, the content store and the Bundles of rukpak's first API are
// consumer-side interfaces (AppMode, ServeMode, DependencyWaits, Channels, Bundles), so the
// BundleDeployment reconciler is tested with fakes. Nothing under adapter/internal imports
// it.
package bundledeployment
