package client

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// adapterRBAC is config/rbac/role.yaml, the rights this release gives the
// adapter: check asks whether the adapter has every one of them, so a rule
// added there is checked without another list to keep. An embed cannot
// reach outside its package's folder, hence the copy, which
// TestAdapterRBACIsTheRelease keeps equal to the manifest.
//
//go:generate cp ../../../config/rbac/role.yaml adapter_rbac.yaml
//go:embed adapter_rbac.yaml
var adapterRBAC []byte

// right is one thing the adapter must be allowed to do, as a
// SubjectAccessReview asks it: on a resource, or a non-resource URL.
type right struct {
	res    *authorizationv1.ResourceAttributes
	nonRes *authorizationv1.NonResourceAttributes
}

// String names the right as a message lists it: "patch
// bundledeployments/status.core.rukpak.io", "update
// customresourcedefinitions.apiextensions.k8s.io named
// bundledeployments.core.rukpak.io", "create apps.kappctrl.k14s.io in
// rukpak-system".
func (r right) String() string {
	if r.nonRes != nil {
		return r.nonRes.Verb + " " + r.nonRes.Path
	}
	a := r.res
	s := a.Verb + " " + a.Resource
	if a.Subresource != "" {
		s += "/" + a.Subresource
	}
	if a.Group != "" {
		s += "." + a.Group
	}
	if a.Name != "" {
		s += " named " + a.Name
	}
	if a.Namespace != "" {
		s += " in " + a.Namespace
	}
	return s
}

// verbOrder lists a rule's writes before its reads: a missing write is
// what fails an install, so a message names it first.
var verbOrder = []string{"create", "patch", "update", "delete", "deletecollection", "impersonate:serviceaccount", "get", "list", "watch"}

// adapterRights are the rights the ClusterRole and the Role of manifest
// grant, each verb of each rule on each of its resources (and names): the
// ClusterRole's cluster-wide, the Role's in ns, the system namespace it is
// installed in (the package renames it).
func adapterRights(manifest []byte, ns string) ([]right, error) {
	roles, err := rolesOf(manifest)
	if err != nil {
		return nil, fmt.Errorf("read the adapter's RBAC manifest: %w", err)
	}
	var out []right
	for _, r := range roles {
		namespace := ""
		if r.Kind == "Role" {
			namespace = ns
		}
		for _, rule := range r.Rules {
			out = append(out, rightsOf(rule, namespace)...)
		}
	}
	return out, nil
}

// role is a Role or ClusterRole of a manifest.
type role struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Rules []rbacv1.PolicyRule `json:"rules"`
}

// rolesOf are the Roles and ClusterRoles of a manifest, in its order (it
// may hold other objects: namespaces, accounts, bindings).
func rolesOf(manifest []byte) ([]role, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	var out []role
	for {
		var r role
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		if r.Kind == "Role" || r.Kind == "ClusterRole" {
			out = append(out, r)
		}
	}
}

// rightsOf spells out one rule, its writes first.
func rightsOf(rule rbacv1.PolicyRule, namespace string) []right {
	verbs := slices.Clone(rule.Verbs)
	slices.SortStableFunc(verbs, func(a, b string) int { return rank(a) - rank(b) })
	var out []right
	for _, verb := range verbs {
		for _, path := range rule.NonResourceURLs {
			out = append(out, right{nonRes: &authorizationv1.NonResourceAttributes{Verb: verb, Path: path}})
		}
		names := rule.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, group := range rule.APIGroups {
			for _, res := range rule.Resources {
				resource, sub, _ := strings.Cut(res, "/")
				for _, name := range names {
					out = append(out, right{res: &authorizationv1.ResourceAttributes{Verb: verb, Group: group, Resource: resource, Subresource: sub, Name: name, Namespace: namespace}})
				}
			}
		}
	}
	return out
}

// rank is where verb stands in verbOrder; a verb not listed comes last.
func rank(verb string) int {
	if i := slices.Index(verbOrder, verb); i >= 0 {
		return i
	}
	return len(verbOrder)
}

// listRights names rights for a message, the first few of many.
func listRights(rights []right) string {
	const shown = 10
	names := make([]string, 0, shown)
	for i, r := range rights {
		if i == shown {
			return strings.Join(names, ", ") + fmt.Sprintf(" and %d more", len(rights)-shown)
		}
		names = append(names, r.String())
	}
	return strings.Join(names, ", ")
}
