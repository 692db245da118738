// Package bundleset keeps the Bundles of a BundleDeployment of rukpak's
// first API (v1alpha1): it lists a BundleDeployment's generated Bundles,
// makes the one its current template asks for, writes their status and
// deletes the ones superseded, as adapter/bundles decides. It also takes
// rukpak v0.16's finalizer off Bundles rukpak made, which nothing else
// would remove once rukpak-kapp has taken over.
//
// It remembers nothing. It may import scope and the pure packages; the
// dispatcher uses it through its Bundles interface.
package bundleset
