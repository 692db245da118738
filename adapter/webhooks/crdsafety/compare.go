package crdsafety

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	"carvel.dev/kapp/pkg/kapp/crdupgradesafety"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Problem is one reason an update is unsafe.
type Problem struct {
	// Version and Field locate it ("" when it concerns the whole CRD);
	// Field is kapp's flattened path, "^" being the version's root schema.
	Version, Field string
	// Rule names the check that failed (kapp's validator, or
	// ExistingObjects for a custom resource that fails the new schema).
	Rule string
	// Detail says what changed, or how the object fails.
	Detail string
	// Object is the namespace/name of an existing custom resource that
	// fails the new schema (ExistingObjects only).
	Object string
}

// Rule names, as docs/crd-safety.md lists them.
const (
	RuleScope           = "NoScopeChange"
	RuleStoredVersion   = "NoStoredVersionRemoved"
	RuleFieldRemoved    = "NoExistingFieldRemoved"
	RuleUnknownChange   = "UnknownChange"
	RuleExistingObjects = "ExistingObjects"
)

// changeRule is one of kapp's per-field change validations with the name
// the message gives it.
type changeRule struct {
	name  string
	check crdupgradesafety.ChangeValidation
}

// changeRules are the narrowing checks of rukpak's preflight, in kapp's
// order, after one of ours that lets documentation change: kapp's
// ChangeValidator refuses any change it has no rule for, and schemas change
// their descriptions with nearly every release. Each rule clears the
// attribute it judged, so a field with several changes is handled once the
// last of them is.
var changeRules = []changeRule{
	{"Documentation", documentationChange},
	{"Enum", crdupgradesafety.EnumChangeValidation},
	{"RequiredField", crdupgradesafety.RequiredFieldChangeValidation},
	{"Minimum", crdupgradesafety.MinimumChangeValidation},
	{"MinItems", crdupgradesafety.MinimumItemsChangeValidation},
	{"MinLength", crdupgradesafety.MinimumLengthChangeValidation},
	{"MinProperties", crdupgradesafety.MinimumPropertiesChangeValidation},
	{"Maximum", crdupgradesafety.MaximumChangeValidation},
	{"MaxLength", crdupgradesafety.MaximumLengthChangeValidation},
	{"MaxItems", crdupgradesafety.MaximumItemsChangeValidation},
	{"MaxProperties", crdupgradesafety.MaximumPropertiesChangeValidation},
	{"Default", crdupgradesafety.DefaultValueChangeValidation},
}

// documentationChange accepts changed descriptions, titles, examples and
// external docs: they change no stored object.
func documentationChange(diff crdupgradesafety.FieldDiff) (bool, error) {
	for _, s := range []*apiextensionsv1.JSONSchemaProps{diff.Old, diff.New} {
		s.Description, s.Title, s.Example, s.ExternalDocs = "", "", nil, nil
	}
	return reflect.DeepEqual(diff.Old, diff.New), nil
}

// Compare runs kapp's validators over an update of old to new: no scope
// change, no stored version removed, no field removed, and no narrowing
// change of a field kept (enum values removed, a field made required,
// bounds tightened, a default changed, or any change no rule knows).
func Compare(old, new *apiextensionsv1.CustomResourceDefinition) []Problem {
	var out []Problem
	if err := crdupgradesafety.NoScopeChange(*old, *new); err != nil {
		out = append(out, Problem{Rule: RuleScope, Detail: err.Error()})
	}
	if err := crdupgradesafety.NoStoredVersionRemoved(*old, *new); err != nil {
		out = append(out, Problem{Rule: RuleStoredVersion, Detail: err.Error()})
	}
	removed := removedFields(old, new)
	out = append(out, removed...)
	if err := crdupgradesafety.NoExistingFieldRemoved(*old, *new); err != nil && len(removed) == 0 {
		// kapp found a removal the flattened schemas do not show: its words.
		out = append(out, Problem{Rule: RuleFieldRemoved, Detail: err.Error()})
	}
	return append(out, changedFields(old, new)...)
}

// versionPairs are the versions old and new both have, in old's order,
// with their flattened schemas.
func versionPairs(old, new *apiextensionsv1.CustomResourceDefinition, each func(version string, o, n crdupgradesafety.FlatSchema)) {
	for _, ov := range old.Spec.Versions {
		nv := versionOf(new, ov.Name)
		if nv == nil {
			continue
		}
		each(ov.Name, flatten(ov.Schema), flatten(nv.Schema))
	}
}

func flatten(v *apiextensionsv1.CustomResourceValidation) crdupgradesafety.FlatSchema {
	if v == nil || v.OpenAPIV3Schema == nil {
		return crdupgradesafety.FlatSchema{}
	}
	return crdupgradesafety.FlattenSchema(v.OpenAPIV3Schema)
}

// removedFields are the fields a kept version loses.
func removedFields(old, new *apiextensionsv1.CustomResourceDefinition) []Problem {
	var out []Problem
	versionPairs(old, new, func(version string, o, n crdupgradesafety.FlatSchema) {
		for _, f := range slices.Sorted(maps.Keys(o)) {
			if _, ok := n[f]; !ok {
				out = append(out, Problem{Version: version, Field: f, Rule: RuleFieldRemoved, Detail: "field removed"})
			}
		}
	})
	return out
}

// changedFields runs the change rules over every field a kept version
// keeps but changes. kapp's ChangeValidator gives up on a version as soon
// as a field was removed; here the fields kept are judged anyway, so one
// message names every problem.
func changedFields(old, new *apiextensionsv1.CustomResourceDefinition) []Problem {
	var out []Problem
	versionPairs(old, new, func(version string, o, n crdupgradesafety.FlatSchema) {
		for _, f := range slices.Sorted(maps.Keys(o)) {
			ns, ok := n[f]
			if !ok {
				continue
			}
			// Children are fields of their own in the flattened schema.
			oc, nc := o[f].DeepCopy(), ns.DeepCopy()
			oc.Properties, nc.Properties = nil, nil
			if reflect.DeepEqual(oc, nc) {
				continue
			}
			out = append(out, judge(version, f, crdupgradesafety.FieldDiff{Old: oc, New: nc})...)
		}
	})
	return out
}

func judge(version, field string, diff crdupgradesafety.FieldDiff) []Problem {
	var out []Problem
	for _, r := range changeRules {
		before := crdupgradesafety.FieldDiff{Old: diff.Old.DeepCopy(), New: diff.New.DeepCopy()}
		handled, err := r.check(diff)
		if err != nil {
			out = append(out, Problem{Version: version, Field: field, Rule: r.name, Detail: detail(r.name, before, err)})
		}
		if handled {
			return out
		}
	}
	return append(out, Problem{Version: version, Field: field, Rule: RuleUnknownChange,
		Detail: fmt.Sprintf("a change no rule knows (%s), so it is not taken for safe", changedAttributes(diff))})
}

// detail is the rule's own text, except where kapp v0.63.3 prints a value
// after clearing it (the required fields) or as raw bytes (defaults).
func detail(rule string, before crdupgradesafety.FieldDiff, err error) string {
	switch rule {
	case "RequiredField":
		var added []string
		for _, f := range before.New.Required {
			if !slices.Contains(before.Old.Required, f) {
				added = append(added, f)
			}
		}
		return fmt.Sprintf("new required fields %v", added)
	case "Default":
		return fmt.Sprintf("default changed from %s to %s", defaultText(before.Old.Default), defaultText(before.New.Default))
	}
	return err.Error()
}

func defaultText(j *apiextensionsv1.JSON) string {
	if j == nil {
		return "none"
	}
	return string(j.Raw)
}

// changedAttributes names the schema attributes that still differ after
// every rule cleared its own.
func changedAttributes(diff crdupgradesafety.FieldDiff) string {
	o, n := reflect.ValueOf(diff.Old).Elem(), reflect.ValueOf(diff.New).Elem()
	var names []string
	for i := range o.NumField() {
		if !reflect.DeepEqual(o.Field(i).Interface(), n.Field(i).Interface()) {
			name := o.Type().Field(i).Tag.Get("json")
			if j := slices.Index([]byte(name), ','); j >= 0 {
				name = name[:j]
			}
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "unknown attributes"
	}
	return fmt.Sprint(names)
}

func versionOf(crd *apiextensionsv1.CustomResourceDefinition, name string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == name {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}
