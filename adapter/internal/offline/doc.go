// Package offline renders what the adapter would do for a BundleDeployment
// without a cluster, through the same functions the controller uses: the
// objects it would apply (Render, for `rukpak-kapp render`) and the Carvel
// packaging objects that install it through a PackageInstall
// (RenderPackage, for `render --as-package`). Every bundle goes through
// store.Materialize; NoCluster stands in for the API.
//
// It remembers nothing. Package adapter and adapter/upgradeplan import it.
package offline
