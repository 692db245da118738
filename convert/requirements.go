package convert

import (
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

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

// requiredCRDGVK reads a CSV's required CRD entry: the group is the CRD
// name after its plural.
func requiredCRDGVK(c v1alpha1.CRDDescription) schema.GroupVersionKind {
	_, group, _ := strings.Cut(c.Name, ".")
	return schema.GroupVersionKind{Group: group, Version: c.Version, Kind: c.Kind}
}
