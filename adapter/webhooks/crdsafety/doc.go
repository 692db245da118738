// Package crdsafety decides whether an update of a CustomResourceDefinition
// that a BundleDeployment installed is safe for the custom resources that
// exist: kapp's crdupgradesafety validators (the library rukpak's preflight
// used) compare the old and the new schema, and every existing custom
// resource of a changed served version is validated against the new schema,
// as rukpak's CRD validating webhook did. The decision is free of clients but for the
// listing of custom resources, which it asks of a Lister.
//
// It runs alongside the reconciler (the validating webhook, wired in adapter.NewManager).
package crdsafety
