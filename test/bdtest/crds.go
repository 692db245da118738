package bdtest

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/gomega" //nolint:revive // Gomega's DSL reads best unqualified.
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// GizmoSpec is the schema of a Gizmo's spec in the CRD upgrade safety
// scenarios: the size and color to start with.
type GizmoSpec map[string]any

// GizmoV1 is the spec schema of the first release: size and color.
func GizmoV1() GizmoSpec {
	return GizmoSpec{"type": "object", "properties": map[string]any{
		"size":  map[string]any{"type": "integer"},
		"color": map[string]any{"type": "string"},
	}}
}

// Without is the schema with a field dropped.
func (s GizmoSpec) Without(field string) GizmoSpec {
	out := s.clone()
	delete(out["properties"].(map[string]any), field)
	return out
}

// With is the schema with a field added.
func (s GizmoSpec) With(field, typ string) GizmoSpec {
	out := s.clone()
	out["properties"].(map[string]any)[field] = map[string]any{"type": typ}
	return out
}

// clone copies the schema and its properties, so edits leave s alone.
func (s GizmoSpec) clone() GizmoSpec {
	out := GizmoSpec{}
	for k, v := range s {
		out[k] = v
	}
	props := map[string]any{}
	for k, v := range s["properties"].(map[string]any) {
		props[k] = v
	}
	out["properties"] = props
	return out
}

// Requiring is the schema with fields made required.
func (s GizmoSpec) Requiring(fields ...string) GizmoSpec {
	out := s.clone()
	out["required"] = fields
	return out
}

// GizmoCRDYAML is the CRD of kind Gizmo (plural gizmos) in group, one
// version v1 with spec as its spec schema; labels go on the CRD (the
// owner labels, for a CRD a test creates as kapp would have).
func GizmoCRDYAML(group string, spec GizmoSpec, labels map[string]string) string {
	return CRDYAML(group, "Gizmo", "gizmos", spec, labels)
}

// CRDYAML is a namespaced CRD with one served and stored version v1.
func CRDYAML(group, kind, plural string, spec GizmoSpec, labels map[string]string) string {
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group,
			"scope": "Namespaced",
			"names": map[string]any{"plural": plural, "singular": strings.ToLower(kind), "kind": kind, "listKind": kind + "List"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type":       "object",
					"properties": map[string]any{"spec": map[string]any(spec)},
				}},
			}},
		},
	}
	if len(labels) > 0 {
		crd["metadata"].(map[string]any)["labels"] = labels
	}
	out, err := yaml.Marshal(crd)
	Expect(err).NotTo(HaveOccurred())
	return string(out)
}

// CRD decodes a CRD's YAML.
func CRD(doc string) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	ExpectWithOffset(1, yaml.Unmarshal([]byte(doc), crd)).To(Succeed())
	return crd
}

// Gizmo is a custom resource of the Gizmo CRD in group.
func Gizmo(group, ns, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "Gizmo",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
}

// CreateGizmo creates a Gizmo, retrying while its CRD becomes served.
func CreateGizmo(ctx context.Context, group, ns, name string, spec map[string]any) {
	EventuallyWithOffset(1, func() error { return env.Client.Create(ctx, Gizmo(group, ns, name, spec)) }).WithContext(ctx).Should(Succeed())
}

// GizmoSpecOf reads a Gizmo's spec as the API server serves it now.
func GizmoSpecOf(ctx context.Context, group, ns, name string) (map[string]any, error) {
	u := Gizmo(group, ns, name, nil)
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
		return nil, err
	}
	spec, _, err := unstructured.NestedMap(u.Object, "spec")
	return spec, err
}

// ApplyCRD creates or updates a CRD as kapp would (an update of the whole
// object) and waits until it is served; the error is the API server's.
func ApplyCRD(ctx context.Context, doc string) error {
	crd := CRD(doc)
	live := &apiextensionsv1.CustomResourceDefinition{}
	err := env.Client.Get(ctx, client.ObjectKeyFromObject(crd), live)
	switch {
	case err == nil:
		crd.ResourceVersion = live.ResourceVersion
		if err := env.Client.Update(ctx, crd); err != nil {
			return err
		}
	default:
		if err := env.Client.Create(ctx, crd); err != nil {
			return fmt.Errorf("create CRD %s: %w", crd.Name, err)
		}
	}
	u := &unstructured.Unstructured{}
	u.SetKind("CustomResourceDefinition")
	u.SetName(crd.Name)
	return harness.WaitForCRDs(ctx, env.Client, []*unstructured.Unstructured{u})
}
