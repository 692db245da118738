package takeover

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// later reports what rukpak-kapp's own rendering changes once the
// BundleDeployment's spec changes: the take-over keeps rukpak's rendering
// until then, so these are reported rather than silently applied.
func (p *Plan) later(in Input) {
	switch p.Class {
	case rukpakv1alpha2.ClassHelm:
		if in.Release != nil {
			p.Later = append(p.Later, nondeterminism(in.Release.Chart)...)
			for _, h := range in.Release.Hooks {
				p.Later = append(p.Later, fmt.Sprintf("Helm ran hook %s at install; kapp-controller's helm template applies hooks as ordinary objects", h))
			}
		}
	case rukpakv1alpha2.ClassRegistry:
		if in.Rendered != nil {
			p.Later = append(p.Later, renderingChanges(in.Installed, in.Rendered)...)
		}
	}
}

// renderingChanges lists how rukpak-kapp's rendering differs from rukpak's,
// object by object.
func renderingChanges(installed, rendered []*unstructured.Unstructured) []string {
	have, want := byRef(installed), byRef(rendered)
	var out []string
	for _, ref := range sortedRefs(have) {
		if _, ok := want[ref]; !ok {
			out = append(out, fmt.Sprintf("%s (rukpak's rendering only) will be deleted by kapp", ref))
		}
	}
	for _, ref := range sortedRefs(want) {
		h, ok := have[ref]
		if !ok {
			out = append(out, fmt.Sprintf("%s (rukpak-kapp's rendering) will be created", ref))
			continue
		}
		a, b := withoutOwnerMetadata(h), withoutOwnerMetadata(want[ref])
		delete(a.Object, "status")
		delete(b.Object, "status")
		paths := changedPaths(a.Object, b.Object, "")
		if len(paths) == 0 {
			continue
		}
		msg := fmt.Sprintf("%s will change at %s", ref, strings.Join(paths, ", "))
		if rollsOut(ref, paths) {
			msg += ": its pod template changes, so it rolls out"
		}
		out = append(out, msg)
	}
	return out
}

func rollsOut(ref Ref, paths []string) bool {
	if ref.Group != "apps" {
		return false
	}
	for _, p := range paths {
		if strings.HasPrefix(p, ".spec.template") {
			return true
		}
	}
	return false
}

// changedPaths lists the JSON paths at which a and b differ, down to the
// first differing map key (lists compare whole).
func changedPaths(a, b any, at string) []string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if !aok || !bok {
		if reflect.DeepEqual(a, b) {
			return nil
		}
		return []string{at}
	}
	keys := map[string]bool{}
	for k := range am {
		keys[k] = true
	}
	for k := range bm {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		out = append(out, changedPaths(am[k], bm[k], at+"."+k)...)
	}
	sort.Strings(out)
	return out
}

// nondeterministicFuncs render differently each time or depend on the
// cluster; kapp-controller's helm template has no cluster and no release
// history, so what they render under rukpak is not what they render there.
var nondeterministicFuncs = regexp.MustCompile(`\b(lookup|randAlphaNum|randAlpha|randNumeric|randAscii|randBytes|randInt|uuidv4|now|genCA|genCAWithKey|genPrivateKey|genSelfSignedCert|genSelfSignedCertWithKey|genSignedCert|genSignedCertWithKey|htpasswd|bcrypt)\b|\.Release\.(Revision|IsUpgrade|IsInstall)|\.Capabilities\.`)

// nondeterminism names the chart templates whose output rukpak-kapp cannot
// reproduce, and what in them.
func nondeterminism(c Chart) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(c.Templates)) {
		found := map[string]bool{}
		for _, m := range nondeterministicFuncs.FindAll(c.Templates[name], -1) {
			found[strings.TrimSuffix(string(m), ".")] = true
		}
		if len(found) == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("chart template %s uses %s: helm template without a cluster renders it differently from rukpak's install, so the objects it makes may change at the next change of the BundleDeployment", name, strings.Join(slices.Sorted(maps.Keys(found)), ", ")))
	}
	return out
}

// ChartDifferences lists how a chart (files as the bundle holds them, the
// chart at their root) and values differ from what a release recorded.
func ChartDifferences(rel *Release, chart map[string][]byte, values map[string]any) []string {
	var out []string
	var meta struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if err := yaml.Unmarshal(chart["Chart.yaml"], &meta); err != nil {
		out = append(out, fmt.Sprintf("Chart.yaml cannot be read: %v", err))
	}
	if meta.Name != rel.Chart.Name || meta.Version != rel.Chart.Version {
		out = append(out, fmt.Sprintf("chart %s %s is not the released %s %s", meta.Name, meta.Version, rel.Chart.Name, rel.Chart.Version))
	}
	for _, name := range slices.Sorted(maps.Keys(rel.Chart.Templates)) {
		if strings.HasPrefix(name, "charts/") {
			continue
		}
		if data, ok := chart[name]; !ok || !bytes.Equal(data, rel.Chart.Templates[name]) {
			out = append(out, "template "+name+" differs")
		}
	}
	for name := range chart {
		if strings.HasPrefix(name, "templates/") {
			if _, ok := rel.Chart.Templates[name]; !ok {
				out = append(out, "template "+name+" is new")
			}
		}
	}
	if !sameValues(values, rel.Values) {
		out = append(out, "spec.config.values differ from the released values")
	}
	sort.Strings(out)
	return out
}

// sameValues treats absent and empty values alike, as Helm does.
func sameValues(a, b map[string]any) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	ja, _ := yaml.Marshal(a)
	jb, _ := yaml.Marshal(b)
	return bytes.Equal(ja, jb)
}
