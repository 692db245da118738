// Package takeover decides how rukpak-kapp takes over what rukpak v0.24.0
// installed, and how it hands it back. It is pure: the caller reads the
// BundleDeployment, rukpak's Helm release Secrets and the live objects, and
// gets back what will change, what blocks, and what to clean up.
//
// It owns nothing between calls.
//
// May import (this module): adapter/translate, api/v1alpha2, convert.
package takeover
