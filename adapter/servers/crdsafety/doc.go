// Package crdsafety decides whether an update of a CustomResourceDefinition
// that a BundleDeployment installed is safe for the custom resources that
// exist: kapp's crdupgradesafety validators (the library rukpak's preflight
// used) compare the old and the new schema, and every existing custom
// resource of a changed served version is validated against the new schema,
// as rukpak's CRD validating webhook did. The decision is pure but for the
// listing of custom resources, which it asks of a Lister.
//
// It runs beside the reconciler (the validating webhook, wired in the facade's manager).
//
// May import (this module): adapter/translate, adapter/servers/webhook,
// api/v1alpha2.
package crdsafety
