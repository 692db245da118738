package takeover

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// Ref names one installed object.
type Ref struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// RefOf is u's Ref.
func RefOf(u *unstructured.Unstructured) Ref {
	gk := u.GroupVersionKind().GroupKind()
	return Ref{Group: gk.Group, Kind: gk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// GroupKind is the Ref's group and kind.
func (r Ref) GroupKind() schema.GroupKind { return schema.GroupKind{Group: r.Group, Kind: r.Kind} }

func (r Ref) String() string {
	kind := r.Kind
	if r.Group != "" {
		kind += "." + r.Group
	}
	if r.Namespace == "" {
		return kind + " " + r.Name
	}
	return kind + " " + r.Namespace + "/" + r.Name
}

// ScopeOfKind tells whether a kind is namespaced, as the API server's discovery
// does; known is false for a kind it does not serve.
type ScopeOfKind func(schema.GroupKind) (namespaced, known bool)

// ParseManifest reads a stream of YAML or JSON documents, as Helm's
// manifest and plain bundles are written. Lists are flattened, as kapp
// and Helm do.
func ParseManifest(data []byte) ([]*unstructured.Unstructured, error) {
	objs, err := convert.DecodeAll(data)
	if err != nil {
		return nil, fmt.Errorf("parse manifest: %w", err)
	}
	return objs, nil
}

// Place puts namespaced objects without a namespace into ns and takes the
// namespace off cluster-scoped ones, as Helm and kapp do when they apply.
// A kind the API server does not serve is looked up among the objects'
// own CustomResourceDefinitions.
func Place(objs []*unstructured.Unstructured, ns string, scope ScopeOfKind) ([]*unstructured.Unstructured, error) {
	crds := map[schema.GroupKind]bool{}
	for _, o := range objs {
		if o.GroupVersionKind().GroupKind() == crdKind {
			group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
			s, _, _ := unstructured.NestedString(o.Object, "spec", "scope")
			crds[schema.GroupKind{Group: group, Kind: kind}] = s == "Namespaced"
		}
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		o = o.DeepCopy()
		gk := o.GroupVersionKind().GroupKind()
		namespaced, known := scope(gk)
		if !known {
			namespaced, known = crds[gk]
		}
		if !known {
			return nil, fmt.Errorf("%s: the API server does not serve kind %s and the bundle has no CustomResourceDefinition for it", RefOf(o), gk)
		}
		switch {
		case !namespaced:
			o.SetNamespace("")
		case o.GetNamespace() == "":
			o.SetNamespace(ns)
		}
		out = append(out, o)
	}
	return out, nil
}

var crdKind = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// sortedRefs lists the refs of a map in a stable order.
func sortedRefs[V any](m map[Ref]V) []Ref {
	out := make([]Ref, 0, len(m))
	for r := range m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// isBundleDeploymentRef says whether an owner reference points at a
// BundleDeployment, whatever its UID.
func isBundleDeploymentRef(ref metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == rukpakv1alpha2.GroupVersion.Group && ref.Kind == rukpakv1alpha2.OwnerKind
}

// ownedBy says whether refs hold a controller reference to bd.
func ownedBy(refs []metav1.OwnerReference, bd *rukpakv1alpha2.BundleDeployment) bool {
	for _, r := range refs {
		if isBundleDeploymentRef(r) && r.UID == bd.UID && r.Controller != nil && *r.Controller {
			return true
		}
	}
	return false
}
