// Package conversion serves both generations of rukpak's BundleDeployment API
// from the one stored form: the CRD's conversion webhook (api/v1alpha1's
// conversion, v1alpha2 the hub) on the adapter's webhook server, whose CA
// it keeps in the CRD's spec.conversion.webhook.clientConfig.caBundle.
// kube-apiserver calls it for every request at the version an object is not
// stored in: v1alpha1 requests, and v1alpha2 reads of objects rukpak v0.16
// stored as v1alpha1 (docs/v1alpha1.md).
//
// It runs alongside the reconciler, wired in adapter.NewManager.
package conversion
