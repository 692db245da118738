// Package appmode installs a BundleDeployment as one kapp-controller App
// (the App mode, the default): the App made from the BundleDeployment and
// the content the store fetched, the take-over in place of what rukpak
// v0.24.0 installed (Install, deciding from TakeOverInput: rukpak's release Secrets, the bundle as it is now and the live objects, which `rukpak-kapp migrate` reads alike), the hand-back when the
// BundleDeployment's class is no longer claimed (Release), and the removal
// of the App and everything it installed (Finalize).
//
// It remembers nothing between reconciles. It never imports the serve mode
// or the BundleDeployment reconciler.
package appmode
