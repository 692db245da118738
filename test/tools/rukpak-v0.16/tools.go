//go:build tools

// Package tools pins rukpak v0.16.0, the last release of rukpak's first API
// generation (v1alpha1 Bundles and BundleDeployments): cmd/core (the plain
// and registry+v1 provisioners) and cmd/helm (the helm provisioner) install
// what the v1alpha1 take-over tests then hand to rukpak-kapp.
package tools

import (
	_ "github.com/operator-framework/rukpak/cmd/core"
	_ "github.com/operator-framework/rukpak/cmd/helm"
)
