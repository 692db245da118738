//go:build tools

// Package tools pins rukpak v0.24.0: cmd/core runs alongside rukpak-kapp in the
// scale benchmark, and cmd/core and cmd/helm install what the take-over
// tests then hand to rukpak-kapp. Its dependencies are rukpak's, raised to
// the patch versions helm and kapp pin (helm 3.15.4, Kubernetes 0.30.3;
// helm/go.mod says why).
package tools

import (
	_ "github.com/operator-framework/rukpak/cmd/core"
	_ "github.com/operator-framework/rukpak/cmd/helm"
)
