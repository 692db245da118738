package packaging

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// RefNameSuffix makes a BundleDeployment's name a Package refName, which
// kapp-controller wants to be a domain of at least three segments.
const RefNameSuffix = ".bundles.rukpak-kapp.dev"

// MaxPackageName bounds a Package's name: kapp-controller's aggregated API
// stores a Package as an InternalPackage named by the base32 encoding
// (hex alphabet, no padding) of the Package's name (v0.53.1,
// pkg/apiserver/registry/datapackaging/package_storage_client.go), and
// that name may have 253 characters: 158 bytes encode to 253.
const MaxPackageName = 158

// RefName is the refName of the Packages made of bdName's content.
func RefName(bdName string) string { return bdName + RefNameSuffix }

// PackageName is a Package's object name, as kapp-controller requires it.
func PackageName(refName, version string) string { return refName + "." + version }

// Identity is what a bundle says about itself.
type Identity struct {
	// Version is the bundle's own version (chart, CSV); empty for plain
	// bundles, whose version comes from their content.
	Version     string
	DisplayName string
	Description string
}

// ChartIdentity reads a chart's Chart.yaml.
func ChartIdentity(chartYAML []byte) (Identity, error) {
	var chart struct {
		Name        string `json:"name"`
		Version     string `json:"version"`
		Description string `json:"description"`
	}
	if err := yaml.Unmarshal(chartYAML, &chart); err != nil {
		return Identity{}, fmt.Errorf("read Chart.yaml: %w", err)
	}
	return Identity{Version: chart.Version, DisplayName: chart.Name, Description: chart.Description}, nil
}

// ContentVersion is the version of a plain bundle whose BundleDeployment
// names none: a prerelease of 0.0.0 that names the digest of its files, so
// every content is a version of its own. Build metadata (after "+") would
// not do: versions that differ only there are equal to semver, and "+" is
// not allowed in an object name. Prereleases do not order by time either,
// so upgrades by version constraint need the annotation.
func ContentVersion(files map[string][]byte) string {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(files[p]))
		h.Write(files[p])
	}
	// One identifier with letters in it: a numeric one may not start
	// with 0, which a hex prefix may.
	return "0.0.0-sha256-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// Version is the version of the Package made of bd's content: the
// annotation when bd has one, else the bundle's own (identity), else the
// content's. It fails when that is no semver or makes no valid Package
// name.
func Version(bd *rukpakv1alpha2.BundleDeployment, identity Identity, files map[string][]byte) (string, error) {
	_, from := formatOf(bd)
	version := identity.Version
	if v, ok := bd.Annotations[rukpakv1alpha2.AnnotationPackageVersion]; ok {
		version, from = v, "annotation "+rukpakv1alpha2.AnnotationPackageVersion
	} else if version == "" && bd.Spec.ProvisionerClassName == rukpakv1alpha2.ClassPlain {
		return ContentVersion(files), nil
	}
	if version == "" {
		return "", fmt.Errorf("the bundle has no version (%s is empty): set the annotation %s to a semver", from, rukpakv1alpha2.AnnotationPackageVersion)
	}
	if _, err := semver.Parse(version); err != nil {
		return "", fmt.Errorf("%s: version %q is not a semver (%v): set the annotation %s to one", from, version, err, rukpakv1alpha2.AnnotationPackageVersion)
	}
	name := PackageName(RefName(bd.Name), version)
	if strings.Contains(version, "+") {
		return "", fmt.Errorf("%s: version %q has build metadata, which a Package name (%s) cannot hold: set the annotation %s to a version without it", from, version, name, rukpakv1alpha2.AnnotationPackageVersion)
	}
	if err := CheckPackageName(name); err != nil {
		return "", fmt.Errorf("%s: version %q: %w: set the annotation %s to a shorter version in lower case, or shorten the BundleDeployment's name", from, version, err, rukpakv1alpha2.AnnotationPackageVersion)
	}
	return version, nil
}

// CheckPackageName refuses a Package name kapp-controller would refuse
// (not a DNS subdomain) or could not store (MaxPackageName).
func CheckPackageName(name string) error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("the Package name %s is not a valid object name (%s)", name, strings.Join(errs, "; "))
	}
	if len(name) > MaxPackageName {
		return fmt.Errorf("the Package name %s has %d characters; kapp-controller stores at most %d", name, len(name), MaxPackageName)
	}
	return nil
}
