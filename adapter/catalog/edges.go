package catalog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"

	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
)

// The label and annotations that carry a bundle's place in its catalog: on
// its Package (every one of them) and on the BundleDeployment an
// OperatorInstall writes (the package, channel, bundle and version it
// installs).
const (
	// LabelPackage is the OLM package: on a catalog Package, its
	// PackageMetadata, the OperatorInstall its template renders and the
	// BundleDeployment that installs it.
	LabelPackage         = "catalog.rukpak-kapp.dev/package"
	AnnotationChannel    = "catalog.rukpak-kapp.dev/channel"
	AnnotationBundle     = "catalog.rukpak-kapp.dev/bundle"
	AnnotationVersion    = "catalog.rukpak-kapp.dev/version"
	AnnotationReplaces   = "catalog.rukpak-kapp.dev/replaces"
	AnnotationSkips      = "catalog.rukpak-kapp.dev/skips"
	AnnotationSkipRange  = "catalog.rukpak-kapp.dev/skip-range"
	AnnotationRefName    = "catalog.rukpak-kapp.dev/ref-name"
	AnnotationDeprecated = "catalog.rukpak-kapp.dev/deprecated"
)

// AnnotationOperatorInstall, on a BundleDeployment, names the
// OperatorInstall ("namespace/name") that writes it, and
// AnnotationOperatorInstallGeneration the generation of that
// OperatorInstall it was last written from.
const (
	AnnotationOperatorInstall           = "catalog.rukpak-kapp.dev/operator-install"
	AnnotationOperatorInstallGeneration = "catalog.rukpak-kapp.dev/operator-install-generation"
)

// The annotations of a BundleDeployment that a catalog Package's template
// rendered itself, with kapp's labels, rather than an OperatorInstall
// writing it: the catalog's namespace and the PackageInstall that
// installed it, and the values the template copied. The OperatorInstall
// of that PackageInstall adopts such a BundleDeployment in place
// (AdoptedAnnotations).
const (
	AnnotationPackagesNS          = "catalog.rukpak-kapp.dev/packages-namespace"
	AnnotationInstall             = "catalog.rukpak-kapp.dev/package-install"
	AnnotationUpgradeEdge         = "catalog.rukpak-kapp.dev/upgrade-constraint-policy"
	AnnotationInstallDependencies = "catalog.rukpak-kapp.dev/install-dependencies"
	AnnotationUpgradeApproval     = "catalog.rukpak-kapp.dev/upgrade-approval"
	AnnotationApprovedVersion     = "catalog.rukpak-kapp.dev/approved-version"
)

// AdoptedAnnotations are the annotations an OperatorInstall removes from
// the BundleDeployment it adopts: what the template copied there, which
// the OperatorInstall's spec says now, and the catalog's edges.
var AdoptedAnnotations = []string{AnnotationPackagesNS, AnnotationInstall, AnnotationUpgradeEdge, AnnotationInstallDependencies,
	AnnotationUpgradeApproval, AnnotationApprovedVersion, AnnotationReplaces, AnnotationSkips, AnnotationSkipRange, AnnotationRefName, AnnotationDeprecated}

// The values of upgradeConstraintPolicy, named as operator-controller's
// ClusterExtension names them.
const (
	PolicyCatalogProvided = catalogsv1alpha1.PolicyCatalogProvided
	PolicySelfCertified   = catalogsv1alpha1.PolicySelfCertified
)

// Entry is one bundle of one channel with the edges that lead to it.
type Entry struct {
	Package, Channel, Bundle string
	// Version is the bundle's OLM version (build metadata kept).
	Version   string
	Replaces  string
	Skips     []string
	SkipRange string
	RefName   string
}

// Annotations are e's annotations (the package is a label).
func (e Entry) Annotations() map[string]string {
	a := map[string]string{
		AnnotationChannel: e.Channel,
		AnnotationBundle:  e.Bundle,
		AnnotationVersion: e.Version,
		AnnotationRefName: e.RefName,
	}
	if e.Replaces != "" {
		a[AnnotationReplaces] = e.Replaces
	}
	if len(e.Skips) > 0 {
		a[AnnotationSkips] = strings.Join(e.Skips, ",")
	}
	if e.SkipRange != "" {
		a[AnnotationSkipRange] = e.SkipRange
	}
	return a
}

// EntryOf reads an Entry back from an object's labels and annotations; ok
// is false when the object carries none.
func EntryOf(labels, annotations map[string]string) (Entry, bool) {
	pkg, ok := labels[LabelPackage]
	if !ok || annotations[AnnotationBundle] == "" {
		return Entry{}, false
	}
	e := Entry{
		Package:   pkg,
		Channel:   annotations[AnnotationChannel],
		Bundle:    annotations[AnnotationBundle],
		Version:   annotations[AnnotationVersion],
		Replaces:  annotations[AnnotationReplaces],
		SkipRange: annotations[AnnotationSkipRange],
		RefName:   annotations[AnnotationRefName],
	}
	if s := annotations[AnnotationSkips]; s != "" {
		e.Skips = strings.Split(s, ",")
	}
	return e, true
}

// ReachedFrom says whether the channel reaches e from installed in one edge,
// as OLM v0 and operator-controller v0.10 read a channel: e replaces the
// installed bundle, skips it, or its skipRange holds the installed version.
func (e Entry) ReachedFrom(installed Entry) bool {
	if e.Package != installed.Package {
		return false
	}
	if e.Replaces != "" && e.Replaces == installed.Bundle || slices.Contains(e.Skips, installed.Bundle) {
		return true
	}
	return inRange(e.SkipRange, installed.Version)
}

func inRange(skipRange, version string) bool {
	if skipRange == "" {
		return false
	}
	r, err := semver.ParseRange(skipRange)
	if err != nil {
		return false
	}
	v, err := semver.Parse(version)
	return err == nil && r(v)
}

// from lists what e is reached from, for a message.
func (e Entry) from() string {
	var parts []string
	if e.Replaces != "" {
		parts = append(parts, "replaces "+e.Replaces)
	}
	if len(e.Skips) > 0 {
		parts = append(parts, "skips "+strings.Join(e.Skips, ", "))
	}
	if e.SkipRange != "" {
		parts = append(parts, "skipRange "+e.SkipRange)
	}
	if len(parts) == 0 {
		return "it is the first bundle of its channel and replaces nothing"
	}
	return strings.Join(parts, "; ")
}

// CheckUpgrade decides whether a BundleDeployment that installed the catalog
// bundle installed may move to asked in one edge. Staying on the same
// bundle (a change of values) is always allowed, and so is any move under
// the policy SelfCertified. A move along a longer path is the caller's to
// allow (ShortestPath); the refusal's words cover both. reachable are the
// versions the caller found published that the channel reaches from
// installed in one edge (for the message; nil when
// they could not be read); install names the PackageInstall ("namespace/name",
// "" when unknown). The error is the refusal, a sentence for the
// PackageInstall's status.
func CheckUpgrade(installed, asked Entry, policy string, reachable []string, install string) error {
	if installed.Bundle == asked.Bundle && installed.Package == asked.Package {
		return nil
	}
	if policy == PolicySelfCertified {
		return nil
	}
	optOut := fmt.Sprintf("set the value upgradeConstraintPolicy: %s to move anyway", PolicySelfCertified)
	if installed.Package != asked.Package {
		return fmt.Errorf("the BundleDeployment installed the OLM package %s (version %s); it cannot become package %s: install that package with a PackageInstall of its own, or %s",
			installed.Package, installed.Version, asked.Package, optOut)
	}
	if asked.ReachedFrom(installed) {
		return nil
	}
	next := "no version published in this channel reaches it in one edge"
	if reachable == nil {
		next = "the versions that reach it could not be read"
	} else if len(reachable) > 0 {
		step := reachable[len(reachable)-1]
		next = "from it the channel reaches " + strings.Join(reachable, ", ") + " (kctrl package installed update --version " + step + ")"
		if lower(step, asked.Version) {
			// kapp-controller records the refused version as the last
			// attempted one and refuses anything lower as a downgrade.
			next += "; kapp-controller now takes " + step + " for a downgrade from " + asked.Version + ", so annotate the PackageInstall first (" + annotateCommand(install) + ")"
		}
	}
	return fmt.Errorf("upgrade of %s refused: version %s is installed and %s was asked for, which channel %s does not reach from %s, in one edge or along a path of its published versions (%s: %s); %s. Install a version it reaches, or %s",
		installed.Package, installed.Version, asked.Version, asked.Channel, installed.Version, asked.Bundle, asked.from(), next, optOut)
}

func lower(a, b string) bool {
	va, errA := semver.Parse(a)
	vb, errB := semver.Parse(b)
	return errA == nil && errB == nil && va.LT(vb)
}

func annotateCommand(install string) string {
	ns, name, ok := strings.Cut(install, "/")
	if !ok {
		return `kubectl annotate packageinstall NAME packaging.carvel.dev/downgradable=""`
	}
	return fmt.Sprintf(`kubectl annotate packageinstall %s -n %s packaging.carvel.dev/downgradable=""`, name, ns)
}

// Reachable are the versions among published that the channel reaches
// from installed in one edge, lowest first.
func Reachable(installed Entry, published []Entry) []string {
	var vs []semver.Version
	for _, p := range published {
		if p.Bundle == installed.Bundle || !p.ReachedFrom(installed) {
			continue
		}
		if v, err := semver.Parse(p.Version); err == nil && !slices.ContainsFunc(vs, v.Equals) {
			vs = append(vs, v)
		}
	}
	semver.Sort(vs)
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.String())
	}
	return out
}
