// Package catalogedges refuses, before it is stored, an update of a
// BundleDeployment that a catalog Package made (adapter/pure/catalog) when
// it moves to a bundle the catalog's channel does not reach from the
// installed one in one edge. kapp-controller picks the highest Package
// version that matches a PackageInstall's constraints and checks no edges;
// its kapp deploy of the refused update fails with this webhook's words,
// which the PackageInstall shows, and nothing changes.
//
// It runs beside the reconciler (the validating webhook, wired in the
// facade's manager), and reads the published Packages of the channel for
// the message only.
//
// May import (this module): adapter/pure/catalog, adapter/servers/webhook.
package catalogedges
