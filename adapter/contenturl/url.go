package contenturl

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Kind is the kind of object whose content a path serves.
type Kind string

// The kinds that have a contentURL.
const (
	KindBundle           Kind = "Bundle"
	KindBundleDeployment Kind = "BundleDeployment"
)

const (
	// Prefix is the path every content URL starts with: rukpak's, which
	// its bundle-reader ClusterRole names (/bundles/*).
	Prefix = "/bundles/"
	// deploymentsDir holds BundleDeployments' content. A Bundle's name has
	// no slash, so no Bundle is ever served from there.
	deploymentsDir = "bundledeployments/"
	suffix         = ".tgz"
)

// Path is where the content of the object kind/name is served.
func Path(kind Kind, name string) string {
	if kind == KindBundleDeployment {
		return Prefix + deploymentsDir + name + suffix
	}
	return Prefix + name + suffix
}

// For is the contentURL of kind/name served at address (scheme, host and
// port, as clients reach the adapter's webhook Service); "" when the
// content is not served (no address).
func For(address string, kind Kind, name string) string {
	if address == "" {
		return ""
	}
	return strings.TrimSuffix(address, "/") + Path(kind, name)
}

// Parse reads a request path back into the object it names.
func Parse(path string) (Kind, string, bool) {
	rest, ok := strings.CutPrefix(path, Prefix)
	if !ok {
		return "", "", false
	}
	kind := KindBundle
	if r, ok := strings.CutPrefix(rest, deploymentsDir); ok {
		kind, rest = KindBundleDeployment, r
	}
	name, ok := strings.CutSuffix(rest, suffix)
	if !ok || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return "", "", false
	}
	return kind, name, true
}
