// Package scope is the bottom of the adapter's glue: what one reconcile
// of a BundleDeployment knows (Scope), what a step hands back (Outcome),
// and how the steps' errors are classified for the status (FailureOf).
//
// It owns no state and talks to no cluster. Every other package under
// adapter/internal may import it.
package scope
