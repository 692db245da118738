//go:build tools

// Package tools pins operator-controller v0.9.0, OLM v1's controller as it
// last wrote rukpak's v1alpha1 BundleDeployments (December 2023): cmd/manager
// runs against rukpak-kapp in the OLM v1 conformance lane (test/olm), and
// so does its own end-to-end suite (package test/e2e, built as a test
// binary from this module, unchanged). A module of its own: both are built
// against operator-controller's own dependency versions (Kubernetes 0.27,
// controller-runtime 0.15), and changing it rebuilds nothing else.
package tools

import (
	_ "github.com/operator-framework/operator-controller/cmd/manager"
)
