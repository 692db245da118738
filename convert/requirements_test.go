package convert

import (
	"fmt"
	"strings"
	"testing"
)

// crdYAML is a minimal apiextensions.k8s.io/v1 CRD serving the given
// versions, the first one stored.
func crdYAML(plural, group, kind string, versions ...string) []byte {
	var vs strings.Builder
	for i, v := range versions {
		fmt.Fprintf(&vs, "  - name: %s\n    served: true\n    storage: %v\n    schema:\n      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n", v, i == 0)
	}
	return []byte(fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[1]s.%[2]s
spec:
  group: %[2]s
  scope: Namespaced
  names: {plural: %[1]s, singular: %[1]s, kind: %[3]s, listKind: %[3]sList}
  versions:
%[4]s`, plural, group, kind, vs.String()))
}

// A CSV that lists one of its own CRDs under required too (published
// bundles do) needs nothing from the cluster for it.
func TestRequiredCRDTheBundleOwnsIsNoDependency(t *testing.T) {
	t.Parallel()
	b := csvBundle(map[string]bool{"AllNamespaces": true}, `  customresourcedefinitions:
    owned:
    - {name: widgets.example.com, version: v1, kind: Widget}
    required:
    - {name: widgets.example.com, version: v1, kind: Widget}
`)
	b["manifests/widgets.yaml"] = crdYAML("widgets", "example.com", "Widget", "v1", "v1alpha1")
	if _, err := Objects(b, Options{InstallNamespace: "op-ns"}); err != nil {
		t.Fatalf("Objects: %v", err)
	}
}

// A required CRD the bundle ships at another version only is still needed
// from the cluster.
func TestRequiredCRDAtAVersionTheBundleDoesNotServeStays(t *testing.T) {
	t.Parallel()
	b := csvBundle(map[string]bool{"AllNamespaces": true}, `  customresourcedefinitions:
    required:
    - {name: widgets.example.com, version: v2, kind: Widget}
`)
	b["manifests/widgets.yaml"] = crdYAML("widgets", "example.com", "Widget", "v1")
	_, err := Objects(b, Options{InstallNamespace: "op-ns"})
	if err == nil || !strings.Contains(err.Error(), "required CustomResourceDefinition widgets.example.com") {
		t.Fatalf("error = %v, want the requirement at v2 reported", err)
	}
}
