package crdsafety

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// objectCheck is one listing of existing custom resources and the new
// schemas each of them must pass.
type objectCheck struct {
	// ListVersion is the version the objects are read at: one the old
	// CRD serves.
	ListVersion string
	// Against are the new versions whose schemas the objects must pass.
	Against []string
}

// objectChecks says which existing objects must pass which new schemas,
// as rukpak's webhook did: a served version whose schema changed is read at
// that version; a version the new CRD serves that the old did not is read
// at the old storage version when no conversion webhook stands between them
// (the API server then only rewrites apiVersion). A version served before
// and unchanged needs no listing, and neither does a new version behind a
// conversion webhook: the webhook decides what the objects become.
func objectChecks(old, new *apiextensionsv1.CustomResourceDefinition) []objectCheck {
	webhook := new.Spec.Conversion != nil && new.Spec.Conversion.Strategy == apiextensionsv1.WebhookConverter
	byList := map[string][]string{}
	for _, nv := range new.Spec.Versions {
		if !nv.Served {
			continue
		}
		ov := versionOf(old, nv.Name)
		switch {
		case ov != nil && ov.Served:
			if !equality.Semantic.DeepEqual(ov.Schema, nv.Schema) {
				byList[nv.Name] = append(byList[nv.Name], nv.Name)
			}
		case !webhook:
			if from := servedStorage(old); from != "" {
				byList[from] = append(byList[from], nv.Name)
			}
		}
	}
	out := make([]objectCheck, 0, len(byList))
	for list, against := range byList {
		out = append(out, objectCheck{ListVersion: list, Against: against})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ListVersion < out[j].ListVersion })
	return out
}

// servedStorage is the version the old CRD stores, if it serves it, else
// the first it serves.
func servedStorage(crd *apiextensionsv1.CustomResourceDefinition) string {
	first := ""
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		if v.Storage {
			return v.Name
		}
		if first == "" {
			first = v.Name
		}
	}
	return first
}

// schema is a new version's schema, ready to judge objects: validation as
// the API server validates a write, and pruning as it drops unknown fields
// on every read and write.
type schema struct {
	version    string
	validator  validation.SchemaValidator
	structural *structuralschema.Structural
}

func newSchema(crd *apiextensionsv1.CustomResourceDefinition, version string) (*schema, error) {
	v := versionOf(crd, version)
	s := &schema{version: version}
	if v == nil || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return s, nil
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
		return nil, fmt.Errorf("read the schema of version %q: %w", version, err)
	}
	var err error
	if s.validator, _, err = validation.NewSchemaValidator(internal); err != nil {
		return nil, fmt.Errorf("read the schema of version %q: %w", version, err)
	}
	if s.structural, err = structuralschema.NewStructural(internal); err != nil {
		return nil, fmt.Errorf("read the schema of version %q: %w", version, err)
	}
	return s, nil
}

// judge says how obj fails the schema; "" when it passes. An object that
// keeps validating but loses fields to pruning fails too: its data would
// be gone at its next write.
func (s *schema) judge(obj *unstructured.Unstructured) string {
	content := runtime.DeepCopyJSON(obj.Object)
	content["apiVersion"] = obj.GroupVersionKind().Group + "/" + s.version
	var problems []string
	if s.structural != nil {
		opts := structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}
		if pruned := pruning.PruneWithOptions(content, s.structural, true, opts); len(pruned) > 0 {
			sort.Strings(pruned)
			problems = append(problems, fmt.Sprintf("%s: not in the new schema, so dropped", strings.Join(pruned, ", ")))
		}
	}
	if s.validator != nil {
		if errs := validation.ValidateCustomResource(nil, content, s.validator); len(errs) > 0 {
			problems = append(problems, errs.ToAggregate().Error())
		}
	}
	return strings.Join(problems, "; ")
}
