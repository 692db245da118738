//go:build tools

// Package tools pins catalogd v0.10.0, the catalog server operator-controller
// v0.9.0 was released with: cmd/manager unpacks the OLM v1 conformance
// lane's test catalog (an image of a file-based catalog) and serves it to
// operator-controller over HTTP.
package tools

import (
	_ "github.com/operator-framework/catalogd/cmd/manager"
)
