// Package templates holds the decisions about a v1alpha1 BundleDeployment's
// generated Bundles: which Bundle its template asks for (named and
// labelled as rukpak v0.16 named them, so a take-over finds rukpak's
// own), which Bundles to make and to delete, and the v1alpha1 statuses
// of the BundleDeployment and its Bundle, mapped from the v1alpha2 status
// the adapter computes. It needs no cluster: API types in, API types out.
//
// It owns nothing between calls.
package templates
