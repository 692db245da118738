// Package appmode installs a BundleDeployment as one kapp-controller App
// (the App mode, the default): the App made from the BundleDeployment and
// the content the store fetched, the take-over in place of what rukpak
// v0.24.0 installed (Install, deciding from offline.TakeOverInput), the hand-back when the
// BundleDeployment's class is no longer claimed (Release), and the removal
// of the App and everything it installed (Finalize).
//
// It remembers nothing between reconciles. It never imports the serve mode
// or the dispatcher.
//
// May import (this module): adapter/catalog, adapter/content, adapter/internal/kube,
// adapter/internal/offline, adapter/internal/scope, adapter/internal/store,
// adapter/status, adapter/takeover, adapter/translate, api/v1alpha2.
package appmode
