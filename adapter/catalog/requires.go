package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/property"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The annotations a catalog Package carries for dependency resolution.
const (
	// AnnotationDefaultChannel is "true" on the Packages of a package's
	// default channel, where dependencies are installed from (as OLM v0
	// resolves them).
	AnnotationDefaultChannel = "catalog.rukpak-kapp.dev/default-channel"
	// AnnotationProvides lists the APIs the bundle's CRDs and APIServices
	// provide (its olm.gvk properties), "group/version/Kind", comma
	// separated.
	AnnotationProvides = "catalog.rukpak-kapp.dev/provides"
	// LabelRequiredBy, on a PackageInstall rukpak-kapp made for a
	// dependency, names the PackageInstall (same namespace) whose bundle
	// needs it first.
	LabelRequiredBy = "catalog.rukpak-kapp.dev/required-by"
	// AnnotationRequires lists what the bundle requires, from its
	// olm.package.required and olm.gvk.required properties (opm writes
	// them from the bundle's metadata/dependencies.yaml): JSON, a list of
	// {"package", "versionRange"} and {"group", "version", "kind"}.
	AnnotationRequires = "catalog.rukpak-kapp.dev/requires"
)

// required is one entry of AnnotationRequires.
type required struct {
	Package      string `json:"package,omitempty"`
	VersionRange string `json:"versionRange,omitempty"`
	Group        string `json:"group,omitempty"`
	Version      string `json:"version,omitempty"`
	Kind         string `json:"kind,omitempty"`
}

// RequiresValue is AnnotationRequires' value for a bundle's
// olm.package.required and olm.gvk.required properties ("": none).
func RequiresValue(pkgs []property.PackageRequired, gvks []property.GVKRequired) string {
	var out []required
	for _, p := range pkgs {
		out = append(out, required{Package: p.PackageName, VersionRange: p.VersionRange})
	}
	for _, g := range gvks {
		out = append(out, required{Group: g.Group, Version: g.Version, Kind: g.Kind})
	}
	if len(out) == 0 {
		return ""
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// RequiresOf reads the needs a catalog Package's annotations declare (none
// without AnnotationRequires).
func RequiresOf(annotations map[string]string) ([]Need, error) {
	v := annotations[AnnotationRequires]
	if v == "" {
		return nil, nil
	}
	var list []required
	if err := json.Unmarshal([]byte(v), &list); err != nil {
		return nil, fmt.Errorf("its annotation %s cannot be read: %w", AnnotationRequires, err)
	}
	out := make([]Need, 0, len(list))
	for _, r := range list {
		if r.Package != "" {
			out = append(out, Need{Package: r.Package, Range: r.VersionRange, What: fmt.Sprintf("%s %s %s", property.TypePackageRequired, r.Package, r.VersionRange)})
			continue
		}
		gvk := schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
		out = append(out, Need{GVK: gvk, What: fmt.Sprintf("%s %s", property.TypeGVKRequired, describeGVK(gvk))})
	}
	return out, nil
}

// DependenciesRole is the ClusterRole (config/catalogs) a namespace binds
// to the adapter to let it install catalog bundles' dependencies there.
const DependenciesRole = "rukpak-kapp-catalog-dependencies"

// AnnotationRequiredBy, on a PackageInstall rukpak-kapp made for a
// dependency, says in a sentence which install needed it.
const AnnotationRequiredBy = LabelRequiredBy

// DependenciesServiceAccount is the ServiceAccount, in the catalog's
// namespace, that the PackageInstalls of dependencies install with. It is
// the namespace owner's, not a dependent's: kctrl deletes the account it
// made for a PackageInstall with it, and a dependency outlives its
// dependent.
const DependenciesServiceAccount = "rukpak-kapp-dependencies"

// Offer is one Package of the catalog, as dependency resolution reads it.
type Offer struct {
	Entry Entry
	// Default says its channel is its package's default.
	Default bool
	// Provides are the APIs its bundle provides.
	Provides []schema.GroupVersionKind
}

// OfferOf reads an Offer from a Package's labels and annotations; a
// retracted Package (AnnotationRetracted) offers nothing.
func OfferOf(labels, annotations map[string]string) (Offer, bool) {
	e, ok := EntryOf(labels, annotations)
	if _, retracted := RetractedIn(annotations); !ok || retracted {
		return Offer{}, false
	}
	o := Offer{Entry: e, Default: annotations[AnnotationDefaultChannel] == "true"}
	for _, s := range strings.Split(annotations[AnnotationProvides], ",") {
		if parts := strings.SplitN(s, "/", 3); len(parts) == 3 {
			o.Provides = append(o.Provides, schema.GroupVersionKind{Group: parts[0], Version: parts[1], Kind: parts[2]})
		}
	}
	return o, true
}

// ProvidesValue is AnnotationProvides' value for gvks.
func ProvidesValue(gvks []schema.GroupVersionKind) string {
	parts := make([]string, 0, len(gvks))
	for _, g := range gvks {
		parts = append(parts, g.Group+"/"+g.Version+"/"+g.Kind)
	}
	slices.Sort(parts)
	return strings.Join(slices.Compact(parts), ",")
}

// Present is a PackageInstall of a catalog package already in the
// namespace: what it installs, or is installing.
type Present struct {
	// Name is the PackageInstall's.
	Name    string
	Package string
	// Version is the version it installs (its status, else the one it
	// asks for); "" when not yet known.
	Version string
}

// Need is one dependency the cluster does not meet yet: an OLM package in
// a version range (olm.package.required), or an API (olm.gvk.required).
type Need struct {
	Package, Range string
	GVK            schema.GroupVersionKind
	// What is the dependency as the bundle declares it, for messages.
	What string
}

// Resolution is what meets the needs of one bundle from its catalog.
type Resolution struct {
	// Install are the Packages to install, each with the needs it meets.
	Install []Offer
	// Wait are the PackageInstalls already there that meet a need once
	// installed.
	Wait []Present
	// Refused says, one sentence each, what no Package of the catalog can
	// meet; nothing is installed for the bundle then.
	Refused []string
}

// Resolve meets needs from offers (the Packages of the catalog's
// namespace), reusing present PackageInstalls: a package dependency is met
// by a PackageInstall of that package in range, else by the highest
// version in range of the package's default channel; an API by a
// PackageInstall of a package that provides it, else by the highest
// version of the default channel of the first package, by name, that
// provides it. A PackageInstall of the package outside the range is a
// conflict, refused naming both.
func Resolve(needs []Need, offers []Offer, present []Present) Resolution {
	var r Resolution
	for _, n := range needs {
		if n.Package != "" {
			r.meetPackage(n, offers, present)
		} else {
			r.meetGVK(n, offers, present)
		}
	}
	return r
}

func (r *Resolution) meetPackage(n Need, offers []Offer, present []Present) {
	rng, err := semver.ParseRange(n.Range)
	if err != nil {
		r.Refused = append(r.Refused, fmt.Sprintf("%s: %q is not a version range", n.What, n.Range))
		return
	}
	for _, p := range present {
		if p.Package != n.Package {
			continue
		}
		if v, err := semver.Parse(p.Version); p.Version != "" && err == nil && !rng(v) {
			r.Refused = append(r.Refused, fmt.Sprintf("%s: PackageInstall %s installs %s %s, outside that range; two installs cannot need incompatible versions of one package (change the version of one, or uninstall it)",
				n.What, p.Name, p.Package, p.Version))
			return
		}
		r.wait(p)
		return
	}
	var candidates []Offer
	var published []string
	for _, o := range offers {
		if o.Entry.Package != n.Package || !o.Default {
			continue
		}
		published = append(published, o.Entry.Version)
		if v, err := semver.Parse(o.Entry.Version); err == nil && rng(v) {
			candidates = append(candidates, o)
		}
	}
	switch {
	case len(published) == 0:
		r.Refused = append(r.Refused, fmt.Sprintf("%s: the catalog holds no package %s", n.What, n.Package))
	case len(candidates) == 0:
		slices.SortFunc(published, compareVersions)
		r.Refused = append(r.Refused, fmt.Sprintf("%s: no version of %s in its default channel is in that range (published: %s)", n.What, n.Package, strings.Join(published, ", ")))
	default:
		r.install(highest(candidates))
	}
}

func (r *Resolution) meetGVK(n Need, offers []Offer, present []Present) {
	byPackage := map[string][]Offer{}
	for _, o := range offers {
		if o.Default && slices.Contains(o.Provides, n.GVK) {
			byPackage[o.Entry.Package] = append(byPackage[o.Entry.Package], o)
		}
	}
	if len(byPackage) == 0 {
		r.Refused = append(r.Refused, fmt.Sprintf("%s: no package of the catalog provides %s", n.What, describeGVK(n.GVK)))
		return
	}
	for _, p := range present {
		if _, ok := byPackage[p.Package]; ok {
			r.wait(p)
			return
		}
	}
	names := make([]string, 0, len(byPackage))
	for name := range byPackage {
		names = append(names, name)
	}
	slices.Sort(names)
	r.install(highest(byPackage[names[0]]))
}

func (r *Resolution) wait(p Present) {
	if !slices.Contains(r.Wait, p) {
		r.Wait = append(r.Wait, p)
	}
}

func (r *Resolution) install(o Offer) {
	if !slices.ContainsFunc(r.Install, func(x Offer) bool { return x.Entry.Package == o.Entry.Package }) {
		r.Install = append(r.Install, o)
	}
}

func highest(offers []Offer) Offer {
	return slices.MaxFunc(offers, func(a, b Offer) int { return compareVersions(a.Entry.Version, b.Entry.Version) })
}

func describeGVK(g schema.GroupVersionKind) string {
	if g.Group == "" {
		return g.Version + "/" + g.Kind
	}
	return g.Group + "/" + g.Version + " " + g.Kind
}
