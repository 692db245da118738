// Package bdtest builds BundleDeployments and the content they install for
// the Ginkgo suites, and matches their conditions. A suite hands it its
// harness with Use before the first spec.
//
// It owns nothing and may import api/ and test/harness.
package bdtest
