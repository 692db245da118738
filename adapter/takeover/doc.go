// Package takeover decides how rukpak-kapp takes over what rukpak v0.24.0
// installed, and how it hands it back. It needs no cluster: the caller reads the
// BundleDeployment, rukpak's Helm release Secrets and the live objects, and
// gets back what will change, what blocks, and what to clean up.
//
// It owns nothing between calls.
package takeover
