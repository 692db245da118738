// Package ownership refuses, before it is stored, a change of the spec, or
// of the catalog entry it names, of a BundleDeployment an OperatorInstall
// writes (catalog.AnnotationOperatorInstall) made by anyone but the adapter
// (its field manager, fieldowner.Name):
// the install's bundle and values change through the OperatorInstall, that
// is through its PackageInstall (kctrl package installed update), and an
// edit by hand, which the OperatorInstall would set back, never reaches
// the App meanwhile. Removing the annotation takes the BundleDeployment out
// of the install's hands; the install then says it cannot write it.
//
// It runs on the webhook server (adapter/webhooks), wired in
// adapter.NewManager, and reads nothing but the request.
package ownership
