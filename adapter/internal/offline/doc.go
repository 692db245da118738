// Package offline renders what the adapter would do for a BundleDeployment
// without writing to a cluster, through the same functions the controller
// uses: the objects it would apply (Render, for `rukpak-kapp render`), the
// Carvel packaging objects that install it through a PackageInstall
// (RenderPackage, for `render --as-package`), and what a take-over of
// rukpak's release is decided from (TakeOverInput: rukpak's release
// Secrets, the bundle as it is now, the live objects), which the App mode
// and `rukpak-kapp migrate` read alike, and the plan of a catalog install's
// upgrade along its channel (PlanUpgrade, for `rukpak-kapp upgrade plan`). Every bundle goes through
// store.Materialize; without a cluster, NoCluster stands in for the API.
//
// It remembers nothing. The App mode and the facade import it.
//
// May import (this module): adapter/bundlefiles, adapter/catalog,
// adapter/internal/store, adapter/packaging, adapter/servers/crdsafety,
// adapter/takeover, adapter/translate, api/v1alpha2, convert.
package offline
