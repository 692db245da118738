//go:build tools

// Package tools pins rukpak v0.24.0, whose cmd/core the scale benchmark runs
// beside rukpak-kapp.
package tools

import _ "github.com/operator-framework/rukpak/cmd/core"
