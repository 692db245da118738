// Package catalog turns an OLM file-based catalog (FBC: olm.package,
// olm.channel, olm.bundle, olm.deprecations, as operator-registry's
// alpha/declcfg reads it) into Carvel packages: one PackageMetadata per
// channel of an OLM package and one Package per bundle of that channel, whose
// App template installs the bundle as a registry+v1 BundleDeployment, so
// that the adapter converts and installs it under every registry+v1 rule it
// knows. It also decides whether an installed catalog bundle may move to
// another along the channel's upgrade edges (replaces, skips, skipRange),
// which kapp-controller does not check, and plans the walk along the
// shortest path when the move is more than one edge (walk.go: which step
// an App installs next, from what it deployed), whether a move is held
// for approval or because the catalog retracted its target (approval.go,
// retracted.go), and makes a pushed
// repository's Packages follow a relocation by imgpkg copy (relocate.go).
//
// Why a channel is its own refName: kapp-controller installs the highest
// Package version that matches a PackageInstall's constraints, so a refName
// holding every channel would move a stable install onto another channel's
// newer prerelease as soon as it is published.
//
// It owns nothing between calls.
package catalog
