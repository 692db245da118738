//go:build tools

// Package tools pins operator-controller v0.9.0 for its end-to-end suite:
// the OLM v1 conformance lane (test/olm) runs that package's test binary,
// unchanged, against rukpak-kapp. Its package holds test files only, so
// this imports the controller, whose dependency versions the suite shares;
// a module of its own (as test/tools/rukpak-e2e is rukpak's), built right
// after test/tools/operator-controller, so it compiles only its own package.
package tools

import (
	_ "github.com/operator-framework/operator-controller/cmd/manager"
)
