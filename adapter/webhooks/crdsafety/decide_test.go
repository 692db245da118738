package crdsafety

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
)

// gizmos is the CRD of the scenario: spec.size and spec.color.
const gizmos = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.safety.example.com
  labels: {core.rukpak.io/owner-kind: BundleDeployment, core.rukpak.io/owner-name: gizmo}
spec:
  group: safety.example.com
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo, listKind: GizmoList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: what a gizmo is
            properties:
              size: {type: integer, maximum: 10, minimum: 1, default: 1}
              color: {type: string, enum: [blue, red], maxLength: 10, minLength: 1}
              tags: {type: array, items: {type: string}, maxItems: 5, minItems: 0}
              labels: {type: object, additionalProperties: {type: string}, maxProperties: 5, minProperties: 0}
status:
  storedVersions: [v1]
`

func parseCRD(t *testing.T, doc string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal([]byte(doc), crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

// edited is gizmos with f applied to a copy.
func edited(t *testing.T, f func(c *apiextensionsv1.CustomResourceDefinition)) *apiextensionsv1.CustomResourceDefinition {
	c := parseCRD(t, gizmos)
	f(c)
	return c
}

func specProps(c *apiextensionsv1.CustomResourceDefinition, version int) *apiextensionsv1.JSONSchemaProps {
	s := c.Spec.Versions[version].Schema.OpenAPIV3Schema.Properties["spec"]
	c.Spec.Versions[version].Schema.OpenAPIV3Schema.Properties["spec"] = s
	return &s
}

// setSpecField replaces one field of spec in version 0.
func setSpecField(c *apiextensionsv1.CustomResourceDefinition, name string, f func(p *apiextensionsv1.JSONSchemaProps)) {
	spec := c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	p := spec.Properties[name]
	f(&p)
	spec.Properties[name] = p
	c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
}

func ptr[T any](v T) *T { return &v }

// withField is gizmos with one field of spec in version 0 edited.
func withField(t *testing.T, name string, f func(p *apiextensionsv1.JSONSchemaProps)) *apiextensionsv1.CustomResourceDefinition {
	return edited(t, func(c *apiextensionsv1.CustomResourceDefinition) { setSpecField(c, name, f) })
}

// fakeLister serves objects per version in pages, counting its calls.
type fakeLister struct {
	objects map[string][]map[string]any
	calls   []string
	err     error
	// slow runs before every page (a deadline test's clock).
	slow func(ctx context.Context)
}

func (l *fakeLister) List(ctx context.Context, version, token string, limit int64) (*unstructured.UnstructuredList, error) {
	l.calls = append(l.calls, fmt.Sprintf("%s@%s/%d", version, token, limit))
	if l.slow != nil {
		l.slow(ctx)
	}
	if l.err != nil {
		return nil, l.err
	}
	start := 0
	if token != "" {
		start, _ = strconv.Atoi(token)
	}
	all := l.objects[version]
	end := min(start+int(limit), len(all))
	out := &unstructured.UnstructuredList{}
	for _, o := range all[start:end] {
		out.Items = append(out.Items, unstructured.Unstructured{Object: o})
	}
	if end < len(all) {
		out.SetContinue(strconv.Itoa(end))
	}
	return out, nil
}

func gizmo(version, ns, name string, spec map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "safety.example.com/" + version, "kind": "Gizmo",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}
}

func TestDecide(t *testing.T) {
	precious := gizmo("v1", "default", "precious", map[string]any{"color": "blue"})
	sized := gizmo("v1", "default", "sized", map[string]any{"size": int64(3)})
	for _, tc := range []struct {
		name string
		old  *apiextensionsv1.CustomResourceDefinition
		new  *apiextensionsv1.CustomResourceDefinition
		// objects per version the lister holds
		objects  map[string][]map[string]any
		optedOut bool
		// allowed, and the reason when no check ran
		allowed bool
		reason  string
		// rules that must be among the problems, and texts in the message
		rules    []string
		contains []string
		// mustList and noList say whether existing objects are read
		mustList, noList bool
	}{
		{name: "unchanged: allowed without listing anything", old: parseCRD(t, gizmos), new: parseCRD(t, gizmos),
			objects: map[string][]map[string]any{"v1": {precious}}, allowed: true, noList: true},
		{name: "a create is never judged", new: parseCRD(t, gizmos), allowed: true, reason: "not an update"},
		{name: "a CRD without the owner label is never judged",
			old:     edited(t, func(c *apiextensionsv1.CustomResourceDefinition) { c.Labels = nil }),
			new:     edited(t, func(c *apiextensionsv1.CustomResourceDefinition) { c.Labels = nil; c.Spec.Scope = "Cluster" }),
			allowed: true, reason: "not installed by a BundleDeployment"},
		{name: "the CRD annotation opts out",
			old: parseCRD(t, gizmos),
			new: edited(t, func(c *apiextensionsv1.CustomResourceDefinition) {
				c.Annotations = map[string]string{AnnotationValidation: "false"}
				c.Spec.Scope = "Cluster"
			}),
			allowed: true, reason: "annotation"},
		{name: "the annotation on the live CRD opts out too (kapp's update carries the bundle's annotations)",
			old: edited(t, func(c *apiextensionsv1.CustomResourceDefinition) {
				c.Annotations = map[string]string{AnnotationValidation: "false"}
			}),
			new:     edited(t, func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Scope = "Cluster" }),
			allowed: true, reason: "annotation"},
		{name: "the annotation with any other value does not", old: parseCRD(t, gizmos),
			new: edited(t, func(c *apiextensionsv1.CustomResourceDefinition) {
				c.Annotations = map[string]string{AnnotationValidation: "true"}
				c.Spec.Scope = "Cluster"
			}),
			rules: []string{RuleScope}},
		{name: "the BundleDeployment opts out", old: parseCRD(t, gizmos),
			new:      edited(t, func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Scope = "Cluster" }),
			optedOut: true, allowed: true, reason: "spec.preflight.crdUpgradeSafety.disabled"},
		{name: "a CRD being deleted (its finalizer removed) is let go", old: parseCRD(t, gizmos),
			new: edited(t, func(c *apiextensionsv1.CustomResourceDefinition) {
				c.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
				c.Spec.Scope = "Cluster"
			}),
			allowed: true, reason: "being deleted"},
		{name: "the issue's scenario: a field removed and one made required, an object losing data",
			old: parseCRD(t, gizmos),
			new: edited(t, func(c *apiextensionsv1.CustomResourceDefinition) {
				spec := specProps(c, 0)
				delete(spec.Properties, "color")
				spec.Required = []string{"size"}
				c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = *spec
			}),
			objects: map[string][]map[string]any{"v1": {sized, precious}},
			rules:   []string{RuleFieldRemoved, "RequiredField", RuleExistingObjects},
			contains: []string{`version "v1", field "^.spec.color": field removed (NoExistingFieldRemoved)`,
				`field "^.spec": new required fields [size] (RequiredField)`,
				`existing custom object default/precious failed validation against version "v1": spec.color: not in the new schema, so dropped; spec.size: Required value`,
				`error validating existing CRs against new CRD's schema for "gizmos.safety.example.com"`},
			mustList: true},
		{name: "a new optional field: allowed, the objects checked once", old: parseCRD(t, gizmos),
			new:     withField(t, "shape", func(p *apiextensionsv1.JSONSchemaProps) { p.Type = "string" }),
			objects: map[string][]map[string]any{"v1": {precious, sized}}, allowed: true, mustList: true},
		{name: "a description changed: allowed", old: parseCRD(t, gizmos),
			new:     withField(t, "size", func(p *apiextensionsv1.JSONSchemaProps) { p.Description = "how big" }),
			allowed: true, mustList: true},
		{name: "scope changed", old: parseCRD(t, gizmos),
			new:   edited(t, func(c *apiextensionsv1.CustomResourceDefinition) { c.Spec.Scope = "Cluster" }),
			rules: []string{RuleScope}, contains: []string{`scope changed from "Namespaced" to "Cluster" (NoScopeChange)`}},
		{name: "a stored version removed", old: edited(t, func(c *apiextensionsv1.CustomResourceDefinition) {
			c.Spec.Versions = append(c.Spec.Versions, *c.Spec.Versions[0].DeepCopy())
			c.Spec.Versions[1].Name, c.Spec.Versions[1].Storage = "v1beta1", false
			c.Status.StoredVersions = []string{"v1beta1", "v1"}
		}),
			new:   parseCRD(t, gizmos),
			rules: []string{RuleStoredVersion}, contains: []string{`stored version "v1beta1" removed (NoStoredVersionRemoved)`}},
		{name: "an enum value removed", old: parseCRD(t, gizmos),
			new:   withField(t, "color", func(p *apiextensionsv1.JSONSchemaProps) { p.Enum = p.Enum[:1] }),
			rules: []string{"Enum"}, contains: []string{`field "^.spec.color": enum values removed`}},
		{name: "an enum value added: allowed", old: parseCRD(t, gizmos),
			new: edited(t, func(c *apiextensionsv1.CustomResourceDefinition) {
				setSpecField(c, "color", func(p *apiextensionsv1.JSONSchemaProps) {
					p.Enum = append(p.Enum, apiextensionsv1.JSON{Raw: []byte(`"green"`)})
				})
			}),
			allowed: true},
		{name: "an enum where there was none", old: parseCRD(t, gizmos),
			new: edited(t, func(c *apiextensionsv1.CustomResourceDefinition) {
				setSpecField(c, "tags", func(p *apiextensionsv1.JSONSchemaProps) {
					items := *p.Items.Schema
					items.Enum = []apiextensionsv1.JSON{{Raw: []byte(`"a"`)}}
					p.Items.Schema = &items
				})
			}),
			rules: []string{"Enum"}},
		{name: "maximum lowered", old: parseCRD(t, gizmos),
			new:   withField(t, "size", func(p *apiextensionsv1.JSONSchemaProps) { p.Maximum = ptr(5.0) }),
			rules: []string{"Maximum"}, contains: []string{"maximum constraint decreased from 10 to 5 (Maximum)"}},
		{name: "maximum raised: a widened constraint is allowed", old: parseCRD(t, gizmos),
			new:     withField(t, "size", func(p *apiextensionsv1.JSONSchemaProps) { p.Maximum = ptr(50.0) }),
			allowed: true},
		{name: "minimum raised", old: parseCRD(t, gizmos),
			new:   withField(t, "size", func(p *apiextensionsv1.JSONSchemaProps) { p.Minimum = ptr(2.0) }),
			rules: []string{"Minimum"}},
		{name: "maxLength lowered", old: parseCRD(t, gizmos),
			new:   withField(t, "color", func(p *apiextensionsv1.JSONSchemaProps) { p.MaxLength = ptr(int64(3)) }),
			rules: []string{"MaxLength"}},
		{name: "minLength raised", old: parseCRD(t, gizmos),
			new:   withField(t, "color", func(p *apiextensionsv1.JSONSchemaProps) { p.MinLength = ptr(int64(2)) }),
			rules: []string{"MinLength"}},
		{name: "maxItems lowered", old: parseCRD(t, gizmos),
			new:   withField(t, "tags", func(p *apiextensionsv1.JSONSchemaProps) { p.MaxItems = ptr(int64(2)) }),
			rules: []string{"MaxItems"}},
		{name: "minItems raised", old: parseCRD(t, gizmos),
			new:   withField(t, "tags", func(p *apiextensionsv1.JSONSchemaProps) { p.MinItems = ptr(int64(1)) }),
			rules: []string{"MinItems"}},
		{name: "maxProperties lowered", old: parseCRD(t, gizmos),
			new:   withField(t, "labels", func(p *apiextensionsv1.JSONSchemaProps) { p.MaxProperties = ptr(int64(1)) }),
			rules: []string{"MaxProperties"}},
		{name: "minProperties raised", old: parseCRD(t, gizmos),
			new:   withField(t, "labels", func(p *apiextensionsv1.JSONSchemaProps) { p.MinProperties = ptr(int64(1)) }),
			rules: []string{"MinProperties"}},
		{name: "a default changed", old: parseCRD(t, gizmos),
			new:   withField(t, "size", func(p *apiextensionsv1.JSONSchemaProps) { p.Default = &apiextensionsv1.JSON{Raw: []byte("2")} }),
			rules: []string{"Default"}, contains: []string{`field "^.spec.size": default changed from 1 to 2 (Default)`}},
		{name: "a type changed: no rule knows it", old: parseCRD(t, gizmos),
			new: edited(t, func(c *apiextensionsv1.CustomResourceDefinition) {
				setSpecField(c, "size", func(p *apiextensionsv1.JSONSchemaProps) {
					p.Type = "string"
					p.Maximum, p.Minimum, p.Default = nil, nil, nil
				})
			}),
			rules: []string{RuleUnknownChange}, contains: []string{"[type]"}},
		{name: "a new served version without conversion: the objects must pass its schema",
			old: parseCRD(t, gizmos),
			new: edited(t, func(c *apiextensionsv1.CustomResourceDefinition) {
				v2 := *c.Spec.Versions[0].DeepCopy()
				v2.Name, v2.Storage = "v2", false
				s := v2.Schema.OpenAPIV3Schema.Properties["spec"]
				s.Required = []string{"size"}
				v2.Schema.OpenAPIV3Schema.Properties["spec"] = s
				c.Spec.Versions = append(c.Spec.Versions, v2)
			}),
			objects: map[string][]map[string]any{"v1": {sized, precious}},
			rules:   []string{RuleExistingObjects}, contains: []string{`default/precious failed validation against version "v2": spec.size: Required value`},
			mustList: true},
		{name: "a new served version with a conversion webhook: allowed without listing",
			old: parseCRD(t, gizmos),
			new: edited(t, func(c *apiextensionsv1.CustomResourceDefinition) {
				v2 := *c.Spec.Versions[0].DeepCopy()
				v2.Name, v2.Storage = "v2", false
				s := v2.Schema.OpenAPIV3Schema.Properties["spec"]
				s.Required = []string{"size"}
				v2.Schema.OpenAPIV3Schema.Properties["spec"] = s
				c.Spec.Versions = append(c.Spec.Versions, v2)
				c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
					Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1"},
						ClientConfig: &apiextensionsv1.WebhookClientConfig{URL: ptr("https://example.com")}}}
			}),
			objects: map[string][]map[string]any{"v1": {precious}}, allowed: true, noList: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lister := &fakeLister{objects: tc.objects}
			d := Decide(context.Background(), Input{Old: tc.old, New: tc.new, Operation: "UPDATE", BundleDeployment: "gizmo", OptedOut: tc.optedOut, Objects: lister, PageSize: 1})
			if d.Allowed != tc.allowed {
				t.Fatalf("allowed = %v, want %v; message %q, problems %+v", d.Allowed, tc.allowed, d.Message, d.Problems)
			}
			if !strings.Contains(d.Reason, tc.reason) {
				t.Errorf("reason %q does not say %q", d.Reason, tc.reason)
			}
			if tc.reason != "" && len(lister.calls) > 0 {
				t.Errorf("an update let through unchecked listed objects: %v", lister.calls)
			}
			for _, r := range tc.rules {
				found := false
				for _, p := range d.Problems {
					found = found || p.Rule == r
				}
				if !found {
					t.Errorf("no %s problem among %+v", r, d.Problems)
				}
			}
			for _, s := range tc.contains {
				if !strings.Contains(d.Message, s) {
					t.Errorf("message does not say %q:\n%s", s, d.Message)
				}
			}
			if !d.Allowed {
				for _, s := range []string{`for CRD "gizmos.safety.example.com"`, `set the "core.rukpak.io/safe-crd-upgrade-validation" annotation to "false"`,
					`spec.preflight.crdUpgradeSafety.disabled to true on BundleDeployment "gizmo"`} {
					if !strings.Contains(d.Message, s) {
						t.Errorf("refusal does not say %q:\n%s", s, d.Message)
					}
				}
			}
			if tc.mustList && len(lister.calls) == 0 {
				t.Errorf("the existing objects were not read")
			}
			if tc.noList && len(lister.calls) > 0 {
				t.Errorf("objects read although no check needs them: %v", lister.calls)
			}
		})
	}
}

// The cost at rest: an update that changes no served schema (kapp's
// re-apply, a label or annotation written) reads no custom resource.
func TestDecide_UnchangedSchemaListsNothing(t *testing.T) {
	old := parseCRD(t, gizmos)
	new := edited(t, func(c *apiextensionsv1.CustomResourceDefinition) {
		c.Labels["kapp.k14s.io/app"] = "1234"
		c.Annotations = map[string]string{"kapp.k14s.io/identity": "v1;..."}
		c.Spec.Names.ShortNames = []string{"gz"}
	})
	lister := &fakeLister{objects: map[string][]map[string]any{"v1": {gizmo("v1", "a", "b", nil)}}}
	d := Decide(context.Background(), Input{Old: old, New: new, Objects: lister})
	if !d.Allowed || len(lister.calls) != 0 {
		t.Fatalf("allowed %v, lists %v", d.Allowed, lister.calls)
	}
}

func TestDecide_PagesUntilTheFirstFailure(t *testing.T) {
	var objs []map[string]any
	for i := range 7 {
		objs = append(objs, gizmo("v1", "ns", fmt.Sprintf("ok-%d", i), map[string]any{"size": int64(2)}))
	}
	objs = append(objs, gizmo("v1", "ns", "bad", map[string]any{}), gizmo("v1", "ns", "bad-too", map[string]any{}), gizmo("v1", "ns", "never-read", map[string]any{}))
	new := edited(t, func(c *apiextensionsv1.CustomResourceDefinition) {
		spec := specProps(c, 0)
		spec.Required = []string{"size"}
		c.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = *spec
	})
	lister := &fakeLister{objects: map[string][]map[string]any{"v1": objs}}
	d := Decide(context.Background(), Input{Old: parseCRD(t, gizmos), New: new, Objects: lister, PageSize: 3})
	if d.Allowed || !strings.Contains(d.Message, "existing custom object ns/bad failed") {
		t.Fatalf("allowed %v, message %s", d.Allowed, d.Message)
	}
	want := []string{"v1@/3", "v1@3/3", "v1@6/3"}
	if fmt.Sprint(lister.calls) != fmt.Sprint(want) {
		t.Errorf("list calls %v, want %v (page size 3, stop at the page with the first failure)", lister.calls, want)
	}
	if d.Listed != 9 {
		t.Errorf("listed %d, want 9", d.Listed)
	}
}

func TestDecide_DefaultPageSize(t *testing.T) {
	lister := &fakeLister{objects: map[string][]map[string]any{}}
	new := withField(t, "shape", func(p *apiextensionsv1.JSONSchemaProps) { p.Type = "string" })
	Decide(context.Background(), Input{Old: parseCRD(t, gizmos), New: new, Objects: lister})
	if fmt.Sprint(lister.calls) != fmt.Sprintf("[v1@/%d]", DefaultPageSize) {
		t.Errorf("calls %v", lister.calls)
	}
}

// Past the time bound the update is refused: the objects not read may be
// the ones that lose data.
func TestDecide_TimeBound(t *testing.T) {
	var objs []map[string]any
	for i := range 10 {
		objs = append(objs, gizmo("v1", "ns", fmt.Sprintf("g%d", i), map[string]any{"size": int64(2)}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	pages := 0
	lister := &fakeLister{objects: map[string][]map[string]any{"v1": objs}, slow: func(context.Context) {
		if pages++; pages == 2 {
			cancel()
		}
	}}
	new := withField(t, "shape", func(p *apiextensionsv1.JSONSchemaProps) { p.Type = "string" })
	d := Decide(ctx, Input{Old: parseCRD(t, gizmos), New: new, Objects: lister, PageSize: 2})
	if d.Allowed || !d.Incomplete {
		t.Fatalf("allowed %v incomplete %v", d.Allowed, d.Incomplete)
	}
	if !strings.Contains(d.Message, "could not all be checked in time (4 read)") {
		t.Errorf("message: %s", d.Message)
	}
}

func TestDecide_ListFailureRefuses(t *testing.T) {
	lister := &fakeLister{err: errors.New(`gizmos.safety.example.com is forbidden: User "x" cannot list resource "gizmos"`)}
	new := withField(t, "shape", func(p *apiextensionsv1.JSONSchemaProps) { p.Type = "string" })
	d := Decide(context.Background(), Input{Old: parseCRD(t, gizmos), New: new, Objects: lister, BundleDeployment: "gizmo"})
	if d.Allowed || d.Incomplete || !strings.Contains(d.Message, `list the existing gizmos at version "v1": gizmos.safety.example.com is forbidden`) {
		t.Fatalf("allowed %v, message %s", d.Allowed, d.Message)
	}
}

// However many problems, the refusal stays far below the status limit,
// is valid UTF-8 and counts what it left out.
func TestRefusal_Bounded(t *testing.T) {
	old, new := parseCRD(t, gizmos), parseCRD(t, gizmos)
	props := map[string]apiextensionsv1.JSONSchemaProps{}
	for i := range 200 {
		props[fmt.Sprintf("feld-ä-%03d", i)] = apiextensionsv1.JSONSchemaProps{Type: "string", Description: strings.Repeat("ü", 50)}
	}
	s := specProps(old, 0)
	s.Properties = props
	old.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = *s
	var objs []map[string]any
	for i := range 3 {
		objs = append(objs, gizmo("v1", "ns", fmt.Sprintf("%s-%d", strings.Repeat("ö", 60), i), map[string]any{"feld-ä-001": strings.Repeat("x", 500)}))
	}
	d := Decide(context.Background(), Input{Old: old, New: new, Objects: &fakeLister{objects: map[string][]map[string]any{"v1": objs}}, BundleDeployment: "gizmo"})
	if d.Allowed {
		t.Fatal("allowed")
	}
	if len(d.Message) > MaxMessage || !utf8.ValidString(d.Message) {
		t.Fatalf("%d bytes, valid %v", len(d.Message), utf8.ValidString(d.Message))
	}
	if !strings.Contains(d.Message, "more problems") || !strings.Contains(d.Message, "NoExistingFieldRemoved") {
		t.Errorf("message: %s", d.Message)
	}
}

func TestCut_CharacterBoundaries(t *testing.T) {
	s := strings.Repeat("é", 100)
	for limit := 4; limit < 20; limit++ {
		got := cut(s, limit)
		if len(got) > limit || !utf8.ValidString(got) {
			t.Fatalf("cut to %d: %q (%d bytes)", limit, got, len(got))
		}
	}
	if cut("short", 10) != "short" {
		t.Error("a short text is kept")
	}
}

// The BundleDeployment's condition finds the refusal by this name.
func TestWebhookName_IsTheOneStatusLooksFor(t *testing.T) {
	if status.CRDSafetyWebhook != WebhookName {
		t.Fatalf("status looks for %q, the webhook is %q", status.CRDSafetyWebhook, WebhookName)
	}
}
