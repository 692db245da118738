//go:build tools

// Package tools pins rukpak v0.24.0: cmd/core runs beside rukpak-kapp in the
// scale benchmark, and cmd/core and cmd/helm install what the take-over
// tests then hand to rukpak-kapp.
package tools

import (
	_ "github.com/operator-framework/rukpak/cmd/core"
	_ "github.com/operator-framework/rukpak/cmd/helm"
)
