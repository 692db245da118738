// Package convert turns an OLM registry+v1 bundle into the plain objects
// that install it. It is pure: no cluster, no clock, and the same input
// always gives the same bytes.
package convert

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Options say where the operator runs and which namespaces it watches.
type Options struct {
	// InstallNamespace holds the operator's Deployments and namespaced objects.
	InstallNamespace string
	// WatchNamespaces are the target namespaces; empty picks the bundle's
	// default (all namespaces when supported, else its own namespace).
	// [""] means all namespaces.
	WatchNamespaces []string
}

// Error lists every problem of a bundle at once, sorted, so a user fixes
// them in one round and the message is stable.
type Error struct {
	Bundle   string
	Problems []string
}

func (e *Error) Error() string {
	return fmt.Sprintf("convert registry+v1 bundle to plain+v0 bundle: bundle %s: %s", e.Bundle, strings.Join(e.Problems, "; "))
}

// problems collects what is wrong with a bundle.
type problems []string

func (p *problems) addf(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

func (p problems) err(bundle string) error {
	if len(p) == 0 {
		return nil
	}
	sorted := append([]string(nil), p...)
	sort.Strings(sorted)
	return &Error{Bundle: bundle, Problems: sorted}
}

// Objects converts a bundle's files (manifests/ and metadata/, paths
// relative to the bundle root) into the objects that install it, in apply
// order.
func Objects(files map[string][]byte, opts Options) ([]*unstructured.Unstructured, error) {
	b, err := parse(files)
	if err != nil {
		return nil, err
	}
	return b.convert(opts)
}

// YAML converts the bundle and renders one YAML stream.
func YAML(files map[string][]byte, opts Options) ([]byte, error) {
	objs, err := Objects(files, opts)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	for _, o := range objs {
		data, err := Marshal(o)
		if err != nil {
			return nil, err
		}
		buf.WriteString("---\n")
		buf.Write(data)
	}
	return buf.Bytes(), nil
}

// Marshal renders one object as YAML with sorted keys.
func Marshal(o *unstructured.Unstructured) ([]byte, error) {
	data, err := yaml.Marshal(o.Object)
	if err != nil {
		return nil, fmt.Errorf("render %s %s: %w", o.GetKind(), o.GetName(), err)
	}
	return data, nil
}

// toUnstructured turns a typed object into the generic form the output uses.
func toUnstructured(obj runtime.Object, apiVersion, kind string) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %s: %w", kind, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
	return u, nil
}
