package convert

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/blang/semver/v4"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Package identifies an installed bundle to other bundles' olm.package
// dependencies.
type Package struct {
	// Name is the package name (the bundle's
	// operators.operatorframework.io.bundle.package.v1 annotation).
	Name string `json:"name"`
	// Version is the bundle's version (its ClusterServiceVersion's
	// spec.version), a semver version.
	Version string `json:"version"`
}

// InstalledPackage is a package some BundleDeployment installed.
type InstalledPackage struct {
	Package
	// Labels are the bundle's olm.label properties.
	Labels []string `json:"labels,omitempty"`
	// By names what installed it, for messages (a BundleDeployment).
	By string `json:"by,omitempty"`
}

// Facts are what a cluster offers a bundle's dependencies.
type Facts struct {
	// Served holds every group/version/kind the cluster serves.
	Served map[schema.GroupVersionKind]bool
	// Installed lists the installed packages.
	Installed []InstalledPackage
}

// Unmet is a dependency the cluster does not meet, and what to do.
type Unmet struct {
	Dependency Dependency
	// Message is a sentence a user can act on.
	Message string
}

// CheckDependencies returns every dependency the facts do not meet, sorted
// by message. An olm.gvk dependency is met when the API is served; an
// olm.package one when a package of that name is installed at a version in
// the range; an olm.label one when an installed bundle carries the label.
// An olm.constraint is evaluated the same way over its GVKs and packages;
// its CEL rules, which are about catalog bundles, cannot be checked here and
// leave it unmet unless another alternative holds. OLM drops dependency
// types it does not know, so they are met here too.
func CheckDependencies(deps []Dependency, facts Facts) []Unmet {
	var out []Unmet
	for _, d := range deps {
		if msg := unmet(d, facts); msg != "" {
			out = append(out, Unmet{Dependency: d, Message: msg + " (declared in " + d.Source + ")"})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Message < out[j].Message })
	return out
}

func unmet(d Dependency, facts Facts) string {
	if d.Invalid != "" {
		return fmt.Sprintf("dependency %s cannot be checked: %s; ask the bundle's authors to fix it", d, d.Invalid)
	}
	switch d.Type {
	case DependencyGVK:
		if facts.Served[d.GVK] {
			return ""
		}
		return fmt.Sprintf("the cluster does not serve %s: install the operator that provides it", describeGVK(d.GVK))
	case DependencyPackage:
		return unmetPackage(d, facts.Installed)
	case DependencyLabel:
		for _, p := range facts.Installed {
			if slices.Contains(p.Labels, d.Label) {
				return ""
			}
		}
		return fmt.Sprintf("no installed bundle has the label %q: install a bundle that declares the olm.label property %q", d.Label, d.Label)
	case DependencyConstraint:
		return unmetConstraint(d, facts)
	}
	return ""
}

func unmetPackage(d Dependency, installed []InstalledPackage) string {
	if _, err := semver.ParseRange(d.VersionRange); err != nil {
		// What this package reads is checked already; a caller's own
		// value may not be.
		return fmt.Sprintf("dependency %s cannot be checked: %q is not a semver version range", d, d.VersionRange)
	}
	if why := packageMissing(d.Package, d.VersionRange, installed); why != "" {
		return why + ": install a version in that range with a BundleDeployment"
	}
	return ""
}

// packageMissing says why no installed package meets a range, or "".
func packageMissing(name, versionRange string, installed []InstalledPackage) string {
	want, err := semver.ParseRange(versionRange)
	if err != nil {
		return fmt.Sprintf("the range %q of package %s is not a semver version range", versionRange, name)
	}
	var others []string
	for _, p := range installed {
		if p.Name != name {
			continue
		}
		v, err := semver.ParseTolerant(p.Version)
		if err == nil && want(v) {
			return ""
		}
		at := p.Version
		if p.By != "" {
			at += " (BundleDeployment " + p.By + ")"
		}
		others = append(others, at)
	}
	if len(others) > 0 {
		sort.Strings(others)
		return fmt.Sprintf("package %s is installed at version %s, outside the required range %q", name, strings.Join(others, " and "), versionRange)
	}
	return fmt.Sprintf("package %s at a version in the range %q is not installed", name, versionRange)
}

func unmetConstraint(d Dependency, facts Facts) string {
	c, err := parseConstraint(d.Value)
	if err != nil {
		return fmt.Sprintf("dependency %s cannot be checked: %v", d, err)
	}
	name := c.describe()
	if c.FailureMessage != "" {
		name = strconv.Quote(c.FailureMessage)
	}
	switch t, why := c.eval(facts); t {
	case metTruth:
		return ""
	case unknownTruth:
		return fmt.Sprintf("the olm.constraint %s cannot be checked: %s; make sure the cluster meets it", name, why)
	default:
		return fmt.Sprintf("the olm.constraint %s is not met: %s", name, why)
	}
}

// APIsNeeded lists every group/version/kind the dependencies ask about,
// olm.constraint alternatives included, so a caller can look up only those
// for Facts.Served.
func APIsNeeded(deps []Dependency) []schema.GroupVersionKind {
	seen := map[schema.GroupVersionKind]bool{}
	var walk func(c constraint)
	walk = func(c constraint) {
		if c.GVK != nil {
			seen[c.GVK.gvk()] = true
		}
		for _, n := range c.nested() {
			walk(n)
		}
	}
	for _, d := range deps {
		switch d.Type {
		case DependencyGVK:
			seen[d.GVK] = true
		case DependencyConstraint:
			if c, err := parseConstraint(d.Value); err == nil {
				walk(c)
			}
		}
	}
	out := make([]schema.GroupVersionKind, 0, len(seen))
	for g := range seen {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
