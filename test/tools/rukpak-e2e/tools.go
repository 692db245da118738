//go:build tools

// Package tools pins rukpak v0.24.0 for its end-to-end suite: the
// conformance suite (test/conformance) runs that package's test binary,
// unchanged, against rukpak-kapp. It has a module of its own because the
// suite is built against rukpak's own dependency versions (Kubernetes 0.30,
// controller-runtime 0.18, raised to the patch versions rukpak's module
// pins), and so that changing it rebuilds nothing else.
package tools

import (
	_ "github.com/operator-framework/rukpak/test/e2e"
)
