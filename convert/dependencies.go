package convert

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Dependency types, as OLM names them.
const (
	DependencyGVK        = "olm.gvk"
	DependencyPackage    = "olm.package"
	DependencyLabel      = "olm.label"
	DependencyConstraint = "olm.constraint"
)

// Dependency is something a bundle needs from the cluster. OLM resolves
// these from a catalog; here they are only checked against what is there.
type Dependency struct {
	// Type is olm.gvk, olm.package, olm.label, or whatever else the bundle
	// declares (kept as it is, with Value).
	Type string `json:"type"`
	// Source says where the bundle declares it: a file under metadata/, the
	// ClusterServiceVersion's olm.properties annotation, or its required
	// CRDs or APIServices. One dependency declared in several places lists
	// each, comma separated.
	Source string `json:"source"`
	// GVK is the API an olm.gvk dependency needs served.
	GVK schema.GroupVersionKind `json:"gvk,omitzero"`
	// Package and VersionRange are what an olm.package dependency needs
	// installed; the range is a blang/semver range, as OLM reads it.
	Package      string `json:"package,omitempty"`
	VersionRange string `json:"versionRange,omitempty"`
	// Label is the olm.label an installed bundle must carry.
	Label string `json:"label,omitempty"`
	// Value is the declared value, verbatim (JSON).
	Value json.RawMessage `json:"value,omitempty"`
	// Invalid says why the value cannot be read; such a dependency is
	// never met (OLM cannot resolve it either).
	Invalid string `json:"invalid,omitempty"`
}

// String describes the dependency for people.
func (d Dependency) String() string {
	switch {
	case d.Invalid != "":
		return fmt.Sprintf("%s %s", d.Type, compactJSON(d.Value))
	case d.Type == DependencyGVK:
		return fmt.Sprintf("%s %s", d.Type, describeGVK(d.GVK))
	case d.Type == DependencyPackage:
		return fmt.Sprintf("%s %s %s", d.Type, d.Package, d.VersionRange)
	case d.Type == DependencyLabel:
		return fmt.Sprintf("%s %s", d.Type, d.Label)
	}
	return fmt.Sprintf("%s %s", d.Type, compactJSON(d.Value))
}

// key identifies a dependency regardless of where it is declared.
func (d Dependency) key() string {
	switch {
	case d.Invalid != "":
	case d.Type == DependencyGVK:
		return d.Type + " " + d.GVK.String()
	case d.Type == DependencyPackage:
		return d.Type + " " + d.Package + " " + d.VersionRange
	case d.Type == DependencyLabel:
		return d.Type + " " + d.Label
	}
	return d.Type + " " + compactJSON(d.Value)
}

func describeGVK(g schema.GroupVersionKind) string {
	return fmt.Sprintf("%s (%s)", g.Kind, g.GroupVersion().String())
}

func compactJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	data, _ := json.Marshal(v)
	return string(data)
}

// Property is one entry of a bundle's properties, verbatim.
type Property struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// fromDeclared reads one entry of a dependencies list. OLM knows four
// types; it drops any other, so those are kept only as information.
func fromDeclared(t typedValue, source string) Dependency {
	d := Dependency{Type: t.Type, Source: source, Value: t.Value}
	switch t.Type {
	case DependencyGVK:
		d.readGVK()
	case DependencyPackage:
		d.readPackage("version")
	case DependencyLabel:
		d.readLabel()
	case DependencyConstraint:
		d.readConstraint()
	}
	return d
}

// fromProperty reads a property that OLM's resolver treats as a
// dependency (the form catalogs store dependencies in); ok is false for
// every other property.
func fromProperty(p Property, source string) (Dependency, bool) {
	d := Dependency{Source: source + " (" + p.Type + ")", Value: p.Value}
	switch p.Type {
	case "olm.gvk.required":
		d.Type = DependencyGVK
		d.readGVK()
	case "olm.package.required":
		d.Type = DependencyPackage
		d.readPackage("versionRange")
	case "olm.label.required":
		d.Type = DependencyLabel
		d.readLabel()
	case DependencyConstraint:
		d.Type = DependencyConstraint
		d.readConstraint()
	default:
		return Dependency{}, false
	}
	return d, true
}

func (d *Dependency) readGVK() {
	var v struct {
		Group   string `json:"group"`
		Version string `json:"version"`
		Kind    string `json:"kind"`
	}
	if err := json.Unmarshal(d.Value, &v); err != nil {
		d.Invalid = "the value is not an object with a group, version and kind"
		return
	}
	d.GVK = schema.GroupVersionKind{Group: v.Group, Version: v.Version, Kind: v.Kind}
	if v.Version == "" || v.Kind == "" {
		d.Invalid = "the value names no version or no kind"
	}
}

func (d *Dependency) readPackage(rangeField string) {
	var v map[string]any
	if err := json.Unmarshal(d.Value, &v); err != nil {
		d.Invalid = "the value is not an object with a package name and version range"
		return
	}
	d.Package, _ = v["packageName"].(string)
	d.VersionRange, _ = v[rangeField].(string)
	switch {
	case d.Package == "":
		d.Invalid = "the value names no packageName"
	case d.VersionRange == "":
		d.Invalid = fmt.Sprintf("the value has no %s", rangeField)
	default:
		if _, err := semver.ParseRange(d.VersionRange); err != nil {
			d.Invalid = fmt.Sprintf("%q is not a semver version range: %v", d.VersionRange, err)
		}
	}
}

func (d *Dependency) readConstraint() {
	if _, err := parseConstraint(d.Value); err != nil {
		d.Invalid = err.Error()
	}
}

func (d *Dependency) readLabel() {
	var v struct {
		Label string `json:"label"`
	}
	if err := json.Unmarshal(d.Value, &v); err != nil || v.Label == "" {
		d.Invalid = "the value names no label"
		return
	}
	d.Label = v.Label
}

// dependencies collects what the bundle needs from the cluster: its
// declared dependencies, the properties OLM resolves as dependencies, and
// the CSV's required CRDs and APIServices, leaving out every API the bundle
// serves itself and listing a dependency declared twice once.
func (b *bundle) dependencies() []Dependency {
	var all []Dependency
	for _, t := range b.meta.dependencies {
		all = append(all, fromDeclared(t, b.meta.dependenciesFile))
	}
	for _, p := range b.meta.properties {
		if d, ok := fromProperty(p, b.meta.propertiesFile); ok {
			all = append(all, d)
		}
	}
	for _, p := range b.csvProperties {
		if d, ok := fromProperty(p, csvPropertiesSource); ok {
			all = append(all, d)
		}
	}
	if b.csv != nil {
		for _, c := range b.csv.Spec.CustomResourceDefinitions.Required {
			all = append(all, requiredAPI(requiredCRDGVK(c), c, "ClusterServiceVersion spec.customresourcedefinitions.required"))
		}
		for _, a := range b.csv.Spec.APIServiceDefinitions.Required {
			all = append(all, requiredAPI(schema.GroupVersionKind{Group: a.Group, Version: a.Version, Kind: a.Kind}, a, "ClusterServiceVersion spec.apiservicedefinitions.required"))
		}
	}
	provided := b.provided()
	index := map[string]int{}
	var out []Dependency
	for _, d := range all {
		if d.Type == DependencyGVK && d.Invalid == "" && provided[d.GVK] {
			continue
		}
		if i, ok := index[d.key()]; ok {
			if !slices.Contains(strings.Split(out[i].Source, ", "), d.Source) {
				out[i].Source += ", " + d.Source
			}
			continue
		}
		index[d.key()] = len(out)
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}

// requiredAPI turns a CSV's required CRD or APIService into the olm.gvk
// dependency OLM makes of it.
func requiredAPI(gvk schema.GroupVersionKind, entry any, source string) Dependency {
	value, _ := json.Marshal(map[string]string{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind})
	d := Dependency{Type: DependencyGVK, Source: source, GVK: gvk, Value: value}
	if gvk.Group == "" || gvk.Version == "" || gvk.Kind == "" {
		raw, _ := json.Marshal(entry)
		d.Value = raw
		d.Invalid = "the entry names no group, version or kind"
	}
	return d
}

// requiredCRDGVK reads a CSV's required CRD entry: the group is the CRD
// name after its plural.
func requiredCRDGVK(c v1alpha1.CRDDescription) schema.GroupVersionKind {
	_, group, _ := strings.Cut(c.Name, ".")
	return schema.GroupVersionKind{Group: group, Version: c.Version, Kind: c.Kind}
}

// provided is every group/version/kind the bundle serves itself: the
// served versions of its CRDs. A requirement on one of them needs nothing
// from the cluster (published CSVs list their own CRDs as required too).
func (b *bundle) provided() map[schema.GroupVersionKind]bool {
	out := map[schema.GroupVersionKind]bool{}
	for _, crd := range b.crds {
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
		for _, v := range versions {
			m, _ := v.(map[string]any)
			name, _ := m["name"].(string)
			if served, _ := m["served"].(bool); served && name != "" {
				out[schema.GroupVersionKind{Group: group, Version: name, Kind: kind}] = true
			}
		}
	}
	return out
}
