package api_test

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// access is one row of the adapter account's permissions: what it asks
// and whether config/rbac (as the harness applies it, with config/catalogs)
// allows it, and why.
type access struct {
	verb, group, resource, subresource, namespace, name string
	// path is a non-resource URL (then the fields above but verb are empty).
	path    string
	allowed bool
	why     string
}

func (a access) String() string {
	if a.path != "" {
		return a.verb + " " + a.path
	}
	where := "cluster-wide"
	if a.namespace != "" {
		where = "in " + a.namespace
	}
	what := a.resource
	if a.group != "" {
		what += "." + a.group
	}
	if a.subresource != "" {
		what += "/" + a.subresource
	}
	if a.name != "" {
		what += " " + a.name
	}
	return fmt.Sprintf("%s %s %s", a.verb, what, where)
}

// adapterAccess is what the adapter's account may and may not do. A rule
// widened in config/rbac turns a "no" row into a failure; one narrowed,
// a "yes" row.
var adapterAccess = []access{
	// What the adapter needs.
	{verb: "create", group: "kappctrl.k14s.io", resource: "apps", namespace: harness.SystemNamespace, allowed: true, why: "every BundleDeployment is an App in the system namespace"},
	{verb: "get", resource: "secrets", namespace: harness.SystemNamespace, allowed: true, why: "pull and auth secrets, content Secrets and webhook certificates live there"},
	{verb: "get", resource: "configmaps", namespace: "kapp-controller", name: "kapp-controller-config", allowed: true, why: "kapp-controller's CAs and proxies, which fetches follow"},
	{verb: "watch", group: "apps", resource: "deployments", allowed: true, why: "Healthy judges installed workloads (label-selected watches)"},
	{verb: "patch", group: "core.rukpak.io", resource: "bundledeployments", subresource: "status", allowed: true, why: "the adapter reports on BundleDeployments"},
	{verb: "create", group: "authorization.k8s.io", resource: "subjectaccessreviews", allowed: true, why: "a content download asks whether its token may get the path"},
	{verb: "update", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", name: "bundledeployments.core.rukpak.io", allowed: true, why: "the conversion webhook's caBundle"},
	{verb: "patch", group: "catalogs.rukpak-kapp.dev", resource: "operatorinstalls", subresource: "status", namespace: "operators", allowed: true, why: "the OperatorInstall controller reports on each install"},
	{verb: "get", group: "packaging.carvel.dev", resource: "packageinstalls", namespace: "operators", allowed: true, why: "an install reads its PackageInstall's pick by name"},
	// Allowed, each with its reason in config/rbac and SECURITY.md.
	{verb: "list", resource: "configmaps", allowed: true, why: "drift repair watches installed ConfigMaps' metadata; RBAC cannot grant metadata alone"},
	{verb: "get", resource: "secrets", namespace: "default", name: "kapp-controller-config", allowed: true, why: "kapp-controller's namespace is the operator's to name, so the rule is by name in a ClusterRole"},
	{verb: "impersonate", resource: "serviceaccounts", namespace: harness.SystemNamespace, name: "rukpak-kapp-installer", allowed: true, why: "the CRD upgrade safety check and chart CRDs act as the install account (SECURITY.md: this reaches cluster-admin)"},
	{verb: "create", group: "data.packaging.carvel.dev", resource: "packages", namespace: "operators", allowed: true, why: "OperatorCatalogs publish Packages in their own namespace, which may be any"},
	// What it may not do.
	{verb: "list", resource: "secrets", why: "Secrets are read only in the system namespace"},
	{verb: "get", resource: "secrets", namespace: "default", name: "db-password", why: "no Secret outside the system namespace but kapp-controller-config"},
	{verb: "create", resource: "secrets", namespace: "default", why: "content Secrets are made in the system namespace only"},
	{verb: "create", group: "apps", resource: "deployments", namespace: "default", why: "installed objects are kapp's to write, as the install account"},
	{verb: "patch", resource: "configmaps", namespace: "default", why: "installed objects are never written as the adapter"},
	{verb: "delete", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", name: "widgets.example.com", why: "CRDs are kapp's to delete"},
	{verb: "update", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", name: "widgets.example.com", why: "only the BundleDeployment CRD's caBundle is the adapter's"},
	{verb: "update", group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations", name: "some-other-webhook", why: "only rukpak-kapp's own webhook configuration"},
	{verb: "create", group: "rbac.authorization.k8s.io", resource: "clusterrolebindings", why: "the adapter grants nothing"},
	{verb: "bind", group: "rbac.authorization.k8s.io", resource: "clusterroles", name: "cluster-admin", why: "the adapter grants nothing"},
	{verb: "escalate", group: "rbac.authorization.k8s.io", resource: "clusterroles", why: "the adapter grants nothing"},
	{verb: "impersonate", resource: "users", name: "system:admin", why: "only ServiceAccounts of the system namespace"},
	{verb: "impersonate", resource: "groups", name: "system:masters", why: "only ServiceAccounts of the system namespace"},
	{verb: "impersonate", resource: "serviceaccounts", namespace: "kube-system", name: "replicaset-controller", why: "only ServiceAccounts of the system namespace"},
	{verb: "create", resource: "serviceaccounts", subresource: "token", namespace: harness.SystemNamespace, name: "rukpak-kapp-installer", why: "no tokens are minted"},
	{verb: "create", resource: "pods", namespace: harness.SystemNamespace, why: "nothing runs as the adapter: it unpacks in-process"},
	{verb: "create", resource: "pods", subresource: "exec", namespace: "default", why: "nothing runs as the adapter"},
	{verb: "delete", resource: "namespaces", name: "default", why: "namespaces are watched for drift repair, never written"},
	{verb: "create", group: "packaging.carvel.dev", resource: "packageinstalls", namespace: "default", why: "PackageInstalls are written only in the system namespace (the serve mode)"},
	{verb: "list", group: "packaging.carvel.dev", resource: "packageinstalls", namespace: "operators", why: "a PackageInstall outside the system namespace is read by name only"},
	{verb: "create", group: "packaging.carvel.dev", resource: "packageinstalls", namespace: "operators", why: "a catalog bundle's dependencies are installed only where the namespace binds rukpak-kapp-catalog-dependencies"},
	{verb: "delete", group: "catalogs.rukpak-kapp.dev", resource: "operatorinstalls", namespace: "operators", why: "an install is the user's to delete"},
	{verb: "get", resource: "secrets", namespace: "operators", name: "catalog-pull", why: "an OperatorCatalog's pull secret only where the namespace binds rukpak-kapp-catalog-pull-secrets"},
	{verb: "get", path: "/bundles/anything.tgz", why: "content downloads are for the accounts bound to bundle-reader"},
}

var _ = Describe("the adapter's account (config/rbac)", func() {
	It("may do what its installs need and nothing of what it must not, row by row", func(ctx context.Context) {
		user := "system:serviceaccount:" + harness.SystemNamespace + ":rukpak-kapp"
		groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + harness.SystemNamespace, "system:authenticated"}
		// A binding just applied reaches the authorizer a moment later:
		// the whole matrix is asked again until it holds (a "no" row never
		// turns into a "yes" by waiting).
		Eventually(func(ctx context.Context) []string {
			var wrong []string
			for _, a := range adapterAccess {
				spec := authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups}
				if a.path != "" {
					spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Verb: a.verb, Path: a.path}
				} else {
					spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Verb: a.verb, Group: a.group, Resource: a.resource,
						Subresource: a.subresource, Namespace: a.namespace, Name: a.name}
				}
				sar := &authorizationv1.SubjectAccessReview{Spec: spec}
				if err := env.Client.Create(ctx, sar); err != nil {
					return []string{err.Error()}
				}
				if sar.Status.Allowed != a.allowed {
					word := map[bool]string{true: "allowed", false: "refused"}
					wrong = append(wrong, fmt.Sprintf("%s: %s, want %s (%s)", a, word[sar.Status.Allowed], word[a.allowed], a.why))
				}
			}
			return wrong
		}).WithContext(ctx).Should(BeEmpty())
	})
})
