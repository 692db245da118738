package rbacmatrix

import (
	"fmt"
	"strings"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// Access is one row of the adapter account's permissions: what it asks
// and whether config/rbac (as the harness applies it, with config/catalogs)
// allows it, and why.
type Access struct {
	Verb, Group, Resource, Subresource, Namespace, Name string
	// Path is a non-resource URL (then the fields above but Verb are empty).
	Path    string
	Allowed bool
	Why     string
}

func (a Access) String() string {
	if a.Path != "" {
		return a.Verb + " " + a.Path
	}
	where := "cluster-wide"
	if a.Namespace != "" {
		where = "in " + a.Namespace
	}
	what := a.Resource
	if a.Group != "" {
		what += "." + a.Group
	}
	if a.Subresource != "" {
		what += "/" + a.Subresource
	}
	if a.Name != "" {
		what += " " + a.Name
	}
	return fmt.Sprintf("%s %s %s", a.Verb, what, where)
}

// Adapter is what the adapter's account may and may not do. A rule
// widened in config/rbac turns a "no" row into a failure; one narrowed,
// a "yes" row.
var Adapter = []Access{
	// What the adapter needs.
	{Verb: "create", Group: "kappctrl.k14s.io", Resource: "apps", Namespace: harness.SystemNamespace, Allowed: true, Why: "every BundleDeployment is an App in the system namespace"},
	{Verb: "get", Resource: "secrets", Namespace: harness.SystemNamespace, Allowed: true, Why: "pull and auth secrets, content Secrets and webhook certificates live there"},
	{Verb: "get", Resource: "configmaps", Namespace: "kapp-controller", Name: "kapp-controller-config", Allowed: true, Why: "kapp-controller's CAs and proxies, which fetches follow"},
	{Verb: "watch", Group: "apps", Resource: "deployments", Allowed: true, Why: "Healthy judges installed workloads (label-selected watches)"},
	{Verb: "patch", Group: "core.rukpak.io", Resource: "bundledeployments", Subresource: "status", Allowed: true, Why: "the adapter reports on BundleDeployments"},
	{Verb: "create", Group: "authorization.k8s.io", Resource: "subjectaccessreviews", Allowed: true, Why: "a content download asks whether its token may get the path"},
	{Verb: "update", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: "bundledeployments.core.rukpak.io", Allowed: true, Why: "the conversion webhook's caBundle"},
	{Verb: "patch", Group: "catalogs.rukpak-kapp.dev", Resource: "operatorinstalls", Subresource: "status", Namespace: "operators", Allowed: true, Why: "the OperatorInstall controller reports on each install"},
	{Verb: "get", Group: "packaging.carvel.dev", Resource: "packageinstalls", Namespace: "operators", Allowed: true, Why: "an install reads its PackageInstall's pick by name"},
	// Allowed, each with its reason in config/rbac and SECURITY.md.
	{Verb: "list", Resource: "configmaps", Allowed: true, Why: "drift repair watches installed ConfigMaps' metadata; RBAC cannot grant metadata alone"},
	{Verb: "get", Resource: "secrets", Namespace: "default", Name: "kapp-controller-config", Allowed: true, Why: "kapp-controller's namespace is the operator's to name, so the rule is by name in a ClusterRole"},
	{Verb: "impersonate:serviceaccount", Group: "authentication.k8s.io", Resource: "serviceaccounts", Namespace: harness.SystemNamespace, Name: "rukpak-kapp-installer", Allowed: true, Why: "the CRD upgrade safety check and chart CRDs act as the install account, for what the impersonate-on rows allow only"},
	{Verb: "impersonate-on:serviceaccount:list", Group: "example.com", Resource: "widgets", Allowed: true, Why: "the CRD upgrade safety check lists a changed CRD's custom resources as the install account"},
	{Verb: "impersonate-on:serviceaccount:list", Resource: "secrets", Allowed: true, Why: "the kinds bundles bring are not known in advance, and RBAC cannot leave the built-in ones out of the wildcard (SECURITY.md)"},
	{Verb: "impersonate-on:serviceaccount:create", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Allowed: true, Why: "a chart's CRDs that helm would have created first are created as the App's account"},
	{Verb: "impersonate-on:serviceaccount:patch", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: "widgets.example.com", Allowed: true, Why: "and their labels patched"},
	{Verb: "create", Group: "data.packaging.carvel.dev", Resource: "packages", Namespace: "operators", Allowed: true, Why: "OperatorCatalogs publish Packages in their own namespace, which may be any"},
	// What it may not do.
	{Verb: "list", Resource: "secrets", Why: "Secrets are read only in the system namespace"},
	{Verb: "get", Resource: "secrets", Namespace: "default", Name: "db-password", Why: "no Secret outside the system namespace but kapp-controller-config"},
	{Verb: "create", Resource: "secrets", Namespace: "default", Why: "content Secrets are made in the system namespace only"},
	{Verb: "create", Group: "apps", Resource: "deployments", Namespace: "default", Why: "installed objects are kapp's to write, as the install account"},
	{Verb: "patch", Resource: "configmaps", Namespace: "default", Why: "installed objects are never written as the adapter"},
	{Verb: "delete", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: "widgets.example.com", Why: "CRDs are kapp's to delete"},
	{Verb: "update", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: "widgets.example.com", Why: "only the BundleDeployment CRD's caBundle is the adapter's"},
	{Verb: "update", Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations", Name: "some-other-webhook", Why: "only rukpak-kapp's own webhook configuration"},
	{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings", Why: "the adapter grants nothing"},
	{Verb: "bind", Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: "cluster-admin", Why: "the adapter grants nothing"},
	{Verb: "escalate", Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Why: "the adapter grants nothing"},
	{Verb: "impersonate", Resource: "serviceaccounts", Namespace: harness.SystemNamespace, Name: "rukpak-kapp-installer", Why: "no legacy impersonation: as an install account the adapter does only what the impersonate-on rows allow"},
	{Verb: "impersonate-on:serviceaccount:get", Resource: "secrets", Namespace: "default", Name: "db-password", Why: "as an install account, lists only: no Secret is read by name"},
	{Verb: "impersonate-on:serviceaccount:watch", Resource: "secrets", Why: "as an install account, lists only"},
	{Verb: "impersonate-on:serviceaccount:create", Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings", Why: "as an install account, nothing is granted"},
	{Verb: "impersonate-on:serviceaccount:delete", Group: "apps", Resource: "deployments", Namespace: "default", Why: "as an install account, installed objects are never written: that is kapp's"},
	{Verb: "impersonate-on:serviceaccount:update", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: "widgets.example.com", Why: "as an install account, CRDs are only created and their labels patched"},
	{Verb: "impersonate-on:serviceaccount:delete", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: "widgets.example.com", Why: "as an install account, CRDs are never deleted"},
	{Verb: "impersonate-on:serviceaccount:create", Resource: "pods", Subresource: "exec", Namespace: "default", Why: "as an install account, nothing runs"},
	{Verb: "impersonate:serviceaccount", Group: "authentication.k8s.io", Resource: "serviceaccounts", Namespace: "kube-system", Name: "replicaset-controller", Why: "only ServiceAccounts of the system namespace"},
	{Verb: "impersonate:user-info", Group: "authentication.k8s.io", Resource: "users", Name: "system:admin", Why: "no users or groups, only ServiceAccounts of the system namespace"},
	{Verb: "impersonate", Resource: "users", Name: "system:admin", Why: "only ServiceAccounts of the system namespace"},
	{Verb: "impersonate", Resource: "groups", Name: "system:masters", Why: "only ServiceAccounts of the system namespace"},
	{Verb: "impersonate", Resource: "serviceaccounts", Namespace: "kube-system", Name: "replicaset-controller", Why: "only ServiceAccounts of the system namespace"},
	{Verb: "create", Resource: "serviceaccounts", Subresource: "token", Namespace: harness.SystemNamespace, Name: "rukpak-kapp-installer", Why: "no tokens are minted"},
	{Verb: "create", Resource: "pods", Namespace: harness.SystemNamespace, Why: "nothing runs as the adapter: it unpacks in-process"},
	{Verb: "create", Resource: "pods", Subresource: "exec", Namespace: "default", Why: "nothing runs as the adapter"},
	{Verb: "delete", Resource: "namespaces", Name: "default", Why: "namespaces are watched for drift repair, never written"},
	{Verb: "create", Group: "packaging.carvel.dev", Resource: "packageinstalls", Namespace: "default", Why: "PackageInstalls are written only in the system namespace (the serve mode)"},
	{Verb: "list", Group: "packaging.carvel.dev", Resource: "packageinstalls", Namespace: "operators", Why: "a PackageInstall outside the system namespace is read by name only"},
	{Verb: "create", Group: "packaging.carvel.dev", Resource: "packageinstalls", Namespace: "operators", Why: "a catalog bundle's dependencies are installed only where the namespace binds rukpak-kapp-catalog-dependencies"},
	{Verb: "delete", Group: "catalogs.rukpak-kapp.dev", Resource: "operatorinstalls", Namespace: "operators", Why: "an install is the user's to delete"},
	{Verb: "get", Resource: "secrets", Namespace: "operators", Name: "catalog-pull", Why: "an OperatorCatalog's pull secret only where the namespace binds rukpak-kapp-catalog-pull-secrets"},
	{Verb: "get", Path: "/bundles/anything.tgz", Why: "content downloads are for the accounts bound to bundle-reader"},
}

// Table is Adapter as docs/install.md shows it: a Markdown table, a row
// per request.
func Table() string {
	var b strings.Builder
	b.WriteString("| the adapter's account asks to | allowed | why |\n| --- | --- | --- |\n")
	for _, a := range Adapter {
		word := "no"
		if a.Allowed {
			word = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", a, word, a.Why)
	}
	return b.String()
}
