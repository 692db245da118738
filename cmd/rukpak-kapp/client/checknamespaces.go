package client

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
)

// The rights the adapter needs outside its own namespace come from the
// namespaces' own bindings, so check carries the manifests that grant them,
// as it carries config/rbac: the Role config/sharding gives it in each app
// namespace, and config/catalogs' ClusterRoles a catalog's namespace binds
// for a pull secret and for dependencies. TestNamespaceRBACIsTheRelease
// keeps the copies equal to the files.
//
//go:generate cp ../../../config/sharding/app-namespaces/rukpak-apps-0.yaml shard_rbac.yaml
//go:generate cp ../../../config/catalogs/pull_secret_role.yaml catalog_pull_secret_rbac.yaml
//go:generate cp ../../../config/catalogs/dependencies_role.yaml catalog_dependencies_rbac.yaml
var (
	//go:embed shard_rbac.yaml
	shardRBAC []byte
	//go:embed catalog_pull_secret_rbac.yaml
	pullSecretRBAC []byte
	//go:embed catalog_dependencies_rbac.yaml
	dependenciesRBAC []byte
)

// roleOf is the one Role or ClusterRole of manifest (the sharding manifest
// also holds a namespace, an account and bindings).
func roleOf(manifest []byte) (role, error) {
	roles, err := rolesOf(manifest)
	switch {
	case err != nil:
		return role{}, fmt.Errorf("read an RBAC manifest: %w", err)
	case len(roles) != 1:
		return role{}, fmt.Errorf("an RBAC manifest holds %d Roles and ClusterRoles, not one", len(roles))
	}
	return roles[0], nil
}

// rightsIn are every verb of every rule of r, in namespace ns; a rule on
// Secrets is narrowed to the one Secret named secret when it is not empty
// (the pull secret role grants get on any, the adapter reads one).
func rightsIn(r role, ns, secret string) []right {
	var out []right
	for _, rule := range r.Rules {
		if secret != "" && slices.Contains(rule.Resources, "secrets") {
			rule.ResourceNames = []string{secret}
		}
		out = append(out, rightsOf(rule, ns)...)
	}
	return out
}

// namespaceRBACLine names check's line about namespaces' own bindings.
const namespaceRBACLine = "namespace RBAC"

// namespaceNeed is what the adapter must be allowed in one namespace for
// one reason, and how the namespace's owner grants it.
type namespaceNeed struct {
	kind   needKind
	why    string
	rights []right
	fix    string
}

// needKind is why a namespace's binding is asked for.
type needKind int

const (
	appNamespace needKind = iota
	pullSecret
	// dependencies is optional: only a bundle that requires another needs
	// it, and its status says so.
	dependencies
)

// namespaceNeeds lists what check asks for outside the system namespace:
// config/sharding's Role in each app namespace, the pull secret each
// catalog names, and (optional: only a bundle that requires another needs
// it) the dependencies role in each catalog's namespace.
func namespaceNeeds(systemNS string, appNamespaces []string, catalogs []catalogsv1alpha1.OperatorCatalog) ([]namespaceNeed, error) {
	shard, err := roleOf(shardRBAC)
	if err != nil {
		return nil, err
	}
	pull, err := roleOf(pullSecretRBAC)
	if err != nil {
		return nil, err
	}
	deps, err := roleOf(dependenciesRBAC)
	if err != nil {
		return nil, err
	}
	account := systemNS + ":" + adapterName
	var out []namespaceNeed
	for _, ns := range appNamespaces {
		out = append(out, namespaceNeed{
			kind:   appNamespace,
			why:    "app namespace " + ns,
			rights: rightsIn(shard, ns, ""),
			fix:    fmt.Sprintf("apply config/sharding/app-namespaces' Role %s and its RoleBinding to %s in %s", shard.Metadata.Name, account, ns),
		})
	}
	seen := map[string]bool{}
	for _, c := range catalogs {
		if c.Spec.PullSecret != "" {
			out = append(out, namespaceNeed{
				kind:   pullSecret,
				why:    fmt.Sprintf("catalog %s/%s's pull secret %s", c.Namespace, c.Name, c.Spec.PullSecret),
				rights: rightsIn(pull, c.Namespace, c.Spec.PullSecret),
				fix:    fmt.Sprintf("kubectl create rolebinding %s -n %s --clusterrole %s --serviceaccount %s", pull.Metadata.Name, c.Namespace, pull.Metadata.Name, account),
			})
		}
		if !seen[c.Namespace] {
			seen[c.Namespace] = true
			out = append(out, namespaceNeed{
				kind:   dependencies,
				why:    c.Namespace,
				rights: rightsIn(deps, c.Namespace, ""),
				fix:    fmt.Sprintf("kubectl create rolebinding %s -n %s --clusterrole %s --serviceaccount %s", deps.Metadata.Name, c.Namespace, deps.Metadata.Name, account),
			})
		}
	}
	return out, nil
}

// evalNamespaceNeeds makes the line from what the reviews answered, the
// needs' rights one after another (granted[k]: the k-th right of them
// all): an app namespace or a pull secret not wholly granted fails with
// its fix; a dependencies binding missing is said on the ok line, with
// its fix, as catalogs there install no dependencies.
func evalNamespaceNeeds(needs []namespaceNeed, granted []bool, appNamespacesKnown bool) CheckResult {
	var missing, fixes, without []string
	counts := map[needKind]int{}
	next := 0
	for _, n := range needs {
		counts[n.kind]++
		var lacks []right
		for _, r := range n.rights {
			if !granted[next] {
				lacks = append(lacks, r)
			}
			next++
		}
		switch {
		case len(lacks) == 0:
		case n.kind == dependencies:
			without = append(without, "catalogs in "+n.why+" install no dependencies: "+n.fix+" lets them")
		default:
			missing = append(missing, n.why+": "+listRights(lacks))
			// Catalogs of one namespace share one pull-secret binding.
			if !slices.Contains(fixes, n.fix) {
				fixes = append(fixes, n.fix)
			}
		}
	}
	if len(missing) > 0 {
		return fail(namespaceRBACLine, "the adapter may not do what it needs in "+strings.Join(missing, "; "), strings.Join(fixes, "; "))
	}
	var msg string
	if counts[appNamespace]+counts[pullSecret] == 0 {
		msg = "no app namespace and no catalog pull secret: the adapter needs nothing outside the system namespace"
	} else {
		msg = fmt.Sprintf("the adapter may do what it needs in %d app namespace(s) and may read %d catalog pull secret(s)", counts[appNamespace], counts[pullSecret])
	}
	if !appNamespacesKnown {
		msg += " (no adapter Deployment: its --app-namespaces are not known)"
	}
	if len(without) > 0 {
		msg += "; " + strings.Join(without, "; ") + " (docs/catalogs.md, \"Dependencies\")"
	}
	return ok(namespaceRBACLine, msg)
}

// SplitList reads a comma-separated list flag, as run reads
// --app-namespaces and --classes: each item trimmed, the empty ones left
// out.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// namespaceRBAC asks for the rights the adapter needs outside the system
// namespace, which only a namespace's own binding grants.
func (k checker) namespaceRBAC(ctx context.Context, adapterDep *appsv1.Deployment) CheckResult {
	var list catalogsv1alpha1.OperatorCatalogList
	err := k.c.List(ctx, &list)
	switch {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		// No catalog API: no catalog needs anything (the CRDs line warns).
	case err != nil:
		return warn(namespaceRBACLine, "not verified: the OperatorCatalogs could not be listed: "+err.Error(), readFix(err, "list operatorcatalogs.catalogs.rukpak-kapp.dev"))
	}
	appNamespaces, _ := flagOf(adapterDep, "--app-namespaces")
	needs, err := namespaceNeeds(k.ns, SplitList(appNamespaces), list.Items)
	if err != nil {
		return warn(namespaceRBACLine, "not verified: "+err.Error(), "use a check built from this release's source")
	}
	var all []right
	for _, n := range needs {
		all = append(all, n.rights...)
	}
	granted, err := k.adapterMayAll(ctx, all)
	if err != nil {
		return notAsked(namespaceRBACLine, "what the adapter may do outside "+k.ns, err)
	}
	return evalNamespaceNeeds(needs, granted, adapterDep != nil)
}
