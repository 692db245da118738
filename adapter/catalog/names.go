package catalog

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/util/validation"
)

// DefaultDomain ends the refNames of a catalog published without a domain
// of its own; kapp-controller wants refNames of at least three segments.
const DefaultDomain = "operators.rukpak-kapp.dev"

var notInLabel = regexp.MustCompile(`[^a-z0-9-]+`)

// label maps an OLM package or channel name to one DNS label: lower case,
// every run of other characters one '-' ("stable-4.14" → "stable-4-14").
// Names that map to the same label are refused by the caller.
func label(name string) (string, error) {
	l := strings.Trim(notInLabel.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if errs := validation.IsDNS1123Label(l); len(errs) > 0 {
		return "", fmt.Errorf("%q makes no DNS label (%s)", name, strings.Join(errs, "; "))
	}
	return l, nil
}

// RefName is the refName of a channel's Packages: <channel>.<package>.<domain>.
func RefName(pkg, channel, domain string) (string, error) {
	p, err := label(pkg)
	if err != nil {
		return "", fmt.Errorf("package %w", err)
	}
	c, err := label(channel)
	if err != nil {
		return "", fmt.Errorf("channel %w", err)
	}
	ref := c + "." + p + "." + domain
	if errs := validation.IsDNS1123Subdomain(ref); len(errs) > 0 {
		return "", fmt.Errorf("refName %s is not a DNS subdomain (%s)", ref, strings.Join(errs, "; "))
	}
	return ref, nil
}

// PackageVersion is the Package version of an OLM bundle version: the same
// semver without build metadata, which a Package's name cannot hold (the
// caller refuses two bundles of a channel that differ only there, since
// semver orders them equal anyway).
func PackageVersion(olmVersion string) (string, error) {
	v, err := semver.Parse(olmVersion)
	if err != nil {
		return "", fmt.Errorf("version %q is not a semver: %w", olmVersion, err)
	}
	v.Build = nil
	return v.String(), nil
}

// PackageVersion is the version of e's Package: its OLM version without
// build metadata, or the OLM version as it is when it is no semver.
func (e Entry) PackageVersion() string {
	v, err := PackageVersion(e.Version)
	if err != nil {
		return e.Version
	}
	return v
}
