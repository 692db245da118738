// Package catalogedges refuses, before it is stored, an update of a
// BundleDeployment that a catalog Package made (adapter/catalog) when
// it moves to a bundle no path of the catalog's channel reaches from the
// installed one, or when its image moves without its entry or to an image
// the entry's Package does not name, or to a bundle its catalog retracted.
// A move the install holds for approval is admitted: the reconciler holds
// it (the controller's walk.go), so that the update's other fields land.
// kapp-controller picks the highest
// Package version that matches a PackageInstall's constraints and checks no
// edges; its kapp deploy of the refused update fails with this webhook's
// words, which the PackageInstall shows, and nothing changes. A path of
// several edges is allowed: the adapter walks it (the controller's walk.go).
//
// It runs alongside the reconciler (the validating webhook, wired in the
// manager: adapter.NewManager), and reads the published Packages of the channel (its
// graph and images).
package catalogedges
