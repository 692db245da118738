package convert

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/rukpak-kapp/rukpak-kapp/convert/certs"
)

// Options say where the operator runs and which namespaces it watches.
type Options struct {
	// InstallNamespace holds the operator's Deployments and namespaced objects.
	InstallNamespace string
	// WatchNamespaces are the target namespaces; empty picks the bundle's
	// default (all namespaces when supported, else its own namespace).
	// [""] means all namespaces.
	WatchNamespaces []string
	// Certificates supplies webhook serving certificates; nil makes fresh
	// ones on every call (fine offline, not for a controller).
	Certificates CertSource
	// Images run the operator from elsewhere (a relocated copy): a
	// container's or init container's image, or an environment variable's
	// value (OLM's RELATED_IMAGE_ convention), that is a key is replaced by
	// its value in every Deployment.
	Images map[string]string
}

// FreshCertificates makes one CA per conversion and a certificate per
// Service, valid from now.
func FreshCertificates(now time.Time) CertSource {
	var ca *certs.Pair
	return func(service, namespace string) (ServingCert, error) {
		if ca == nil {
			c, err := certs.NewCA("rukpak-kapp webhook CA", now)
			if err != nil {
				return ServingCert{}, err
			}
			ca = &c
		}
		serving, err := certs.Issue(*ca, service, namespace, now)
		if err != nil {
			return ServingCert{}, err
		}
		return ServingCert{Serving: serving, CABundle: ca.CertPEM}, nil
	}
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

// Result is a converted bundle.
type Result struct {
	// Objects install the bundle, in apply order.
	Objects []*unstructured.Unstructured
	// Metadata is the bundle's identity and what it needs from the
	// cluster; converting does not check it.
	Metadata Metadata
	// Notes say, sorted, where the objects differ from the bundle as
	// shipped and why (a Service of the bundle merged with a generated
	// one, a dead conversion webhook dropped, ...).
	Notes []string
}

// Convert converts a bundle's files (manifests/ and metadata/, paths
// relative to the bundle root) into the objects that install it.
func Convert(files map[string][]byte, opts Options) (*Result, error) {
	b, err := parse(files)
	if err != nil {
		return nil, err
	}
	objs, err := b.convert(opts)
	if err != nil {
		return nil, err
	}
	notes := dedupe(b.notes)
	return &Result{Objects: objs, Metadata: *b.metadata(), Notes: notes}, nil
}

// Objects converts a bundle into the objects that install it, in apply
// order.
func Objects(files map[string][]byte, opts Options) ([]*unstructured.Unstructured, error) {
	r, err := Convert(files, opts)
	if err != nil {
		return nil, err
	}
	return r.Objects, nil
}

// YAML converts the bundle and renders one YAML stream, the notes first
// as comments.
func YAML(files map[string][]byte, opts Options) ([]byte, error) {
	r, err := Convert(files, opts)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	for _, n := range r.Notes {
		buf.WriteString("# note: " + strings.ReplaceAll(n, "\n", " ") + "\n")
	}
	for _, o := range r.Objects {
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
