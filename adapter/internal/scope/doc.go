// Package scope is the bottom of the adapter's glue: what one reconcile
// of a BundleDeployment knows (Scope), what a step hands back (Outcome),
// and how the steps' errors are classified for the status (FailureOf).
//
// It owns no state and talks to no cluster. Every other package under
// adapter/internal may import it.
//
// May import (this module): adapter/bundlefiles, adapter/content,
// adapter/fetch, adapter/status, adapter/translate, api/v1alpha1,
// api/v1alpha2.
package scope
