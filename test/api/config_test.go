package api_test

import (
	"context"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

const adapterUser = "system:serviceaccount:rukpak-system:rukpak-kapp"

func canI(ctx context.Context, verb, group, resource, namespace string) bool {
	return canIName(ctx, verb, group, resource, namespace, "")
}

func canIName(ctx context.Context, verb, group, resource, namespace, name string) bool {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   adapterUser,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:rukpak-system", "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: verb, Group: group, Resource: resource, Namespace: namespace, Name: name,
		},
	}}
	ExpectWithOffset(1, env.Client.Create(ctx, sar)).To(Succeed())
	return sar.Status.Allowed
}

var _ = Describe("the install manifests in config/", func() {
	It("apply cleanly to a real API server (server-side dry run)", func(ctx context.Context) {
		manifests, err := env.Kustomize(ctx, "config/default")
		Expect(err).NotTo(HaveOccurred())
		objs, err := harness.DecodeYAML(manifests)
		Expect(err).NotTo(HaveOccurred())
		kinds := map[string]int{}
		for _, u := range objs {
			kinds[u.GetKind()]++
			Expect(env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("config-test"), client.ForceOwnership, client.DryRunAll)).
				To(Succeed(), "%s %s", u.GetKind(), u.GetName())
			// Nothing here may change kapp-controller's own configuration.
			Expect(u.GetName()).NotTo(Equal("kapp-controller-config"))
		}
		Expect(kinds).To(HaveKeyWithValue("Deployment", 1))
		// rukpak's BundleDeployment and Bundle, and rukpak-kapp's OperatorCatalog
		// and OperatorInstall.
		Expect(kinds).To(HaveKeyWithValue("CustomResourceDefinition", 4))
		Expect(kinds).To(HaveKeyWithValue("ValidatingAdmissionPolicy", 1))
		Expect(kinds).To(HaveKeyWithValue("ValidatingWebhookConfiguration", 1))
		Expect(kinds).To(HaveKeyWithValue("Service", 1))
	})

	It("grant the adapter no wildcard but a list as an install account, and no Secrets outside its namespace", func(ctx context.Context) {
		manifests, err := env.Kustomize(ctx, "config/rbac")
		Expect(err).NotTo(HaveOccurred())
		objs, err := harness.DecodeYAML(manifests)
		Expect(err).NotTo(HaveOccurred())
		for _, u := range objs {
			var rules []rbacv1.PolicyRule
			switch u.GetKind() {
			case "ClusterRole", "Role":
				role := &rbacv1.ClusterRole{}
				Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, role)).To(Succeed())
				rules = role.Rules
			default:
				continue
			}
			for _, r := range rules {
				Expect(r.Verbs).NotTo(ContainElement("*"), "%s %s", u.GetKind(), u.GetName())
				// The one wildcard: what the CRD upgrade safety check lists
				// as an install account is of any kind a bundle brings.
				if slices.Equal(r.Verbs, []string{"impersonate-on:serviceaccount:list"}) {
					continue
				}
				Expect(r.Verbs).NotTo(ContainElement("impersonate"), "no legacy impersonation in %s %s", u.GetKind(), u.GetName())
				Expect(r.Resources).NotTo(ContainElement("*"), "%s %s", u.GetKind(), u.GetName())
				Expect(r.APIGroups).NotTo(ContainElement("*"), "%s %s", u.GetKind(), u.GetName())
				if u.GetKind() == "ClusterRole" && !slices.Equal(r.ResourceNames, []string{"kapp-controller-config"}) {
					Expect(r.Resources).NotTo(ContainElement("secrets"), "cluster-wide Secret access in %s", u.GetName())
				}
				if slices.Contains(r.Resources, "secrets") && len(r.ResourceNames) > 0 {
					Expect(r.Verbs).To(ConsistOf("get", "list", "watch"), "kapp-controller-config is only read")
				}
			}
		}

		By("asking the API server what the adapter's account may do")
		Expect(canI(ctx, "get", "", "secrets", harness.SystemNamespace)).To(BeTrue())
		Expect(canI(ctx, "create", "kappctrl.k14s.io", "apps", harness.SystemNamespace)).To(BeTrue())
		Expect(canI(ctx, "patch", "core.rukpak.io", "bundledeployments/status", "")).To(BeTrue())
		Expect(canI(ctx, "get", "", "secrets", "default")).To(BeFalse())
		// kapp-controller's own configuration, by name, and nothing else there.
		Expect(canIName(ctx, "watch", "", "secrets", harness.KappControllerNamespace, "kapp-controller-config")).To(BeTrue())
		Expect(canIName(ctx, "get", "", "secrets", harness.KappControllerNamespace, "kapp-controller-sidecar-token")).To(BeFalse())
		Expect(canI(ctx, "list", "", "secrets", harness.KappControllerNamespace)).To(BeFalse())
		Expect(canIName(ctx, "update", "", "secrets", harness.KappControllerNamespace, "kapp-controller-config")).To(BeFalse())
		Expect(canI(ctx, "list", "", "secrets", "")).To(BeFalse())
		Expect(canI(ctx, "create", "", "configmaps", "default")).To(BeFalse())
		Expect(canI(ctx, "create", "apiextensions.k8s.io", "customresourcedefinitions", "")).To(BeFalse())
		Expect(canI(ctx, "watch", "apiextensions.k8s.io", "customresourcedefinitions", "")).To(BeTrue())
		Expect(canI(ctx, "get", "apiextensions.k8s.io", "customresourcedefinitions", "")).To(BeFalse())
		Expect(canI(ctx, "create", "kappctrl.k14s.io", "apps", "default")).To(BeFalse())
		// Workloads are watched for Healthy, never written.
		Expect(canI(ctx, "watch", "apps", "deployments", "")).To(BeTrue())
		Expect(canI(ctx, "patch", "apps", "deployments", "default")).To(BeFalse())
		Expect(canI(ctx, "delete", "apps", "statefulsets", "default")).To(BeFalse())
		// Installed objects are watched for drift, never written.
		Expect(canI(ctx, "watch", "", "configmaps", "")).To(BeTrue())
		Expect(canI(ctx, "list", "rbac.authorization.k8s.io", "clusterroles", "")).To(BeTrue())
		Expect(canI(ctx, "update", "", "configmaps", "default")).To(BeFalse())
		Expect(canI(ctx, "watch", "", "secrets", "")).To(BeFalse())
		// Installed custom resources are judged for Healthy only of the
		// kinds an aggregated role grants: none by default.
		Expect(canI(ctx, "list", "health.example.com", "widgets", "")).To(BeFalse())
		// The CRD upgrade safety check: custom resources are listed as the
		// install account (constrained impersonation: lists only), never
		// with a grant of the adapter's own; only its own webhook
		// configuration's caBundle is written.
		Expect(canI(ctx, "list", "safety.example.com", "gizmos", "")).To(BeFalse())
		Expect(canI(ctx, "impersonate-on:serviceaccount:list", "safety.example.com", "gizmos", "")).To(BeTrue())
		Expect(canI(ctx, "impersonate:serviceaccount", "authentication.k8s.io", "serviceaccounts", harness.SystemNamespace)).To(BeTrue())
		Expect(canI(ctx, "impersonate:serviceaccount", "authentication.k8s.io", "serviceaccounts", "default")).To(BeFalse())
		Expect(canI(ctx, "impersonate", "", "serviceaccounts", harness.SystemNamespace)).To(BeFalse())
		Expect(canI(ctx, "impersonate", "", "users", "")).To(BeFalse())
		Expect(canIName(ctx, "update", "admissionregistration.k8s.io", "validatingwebhookconfigurations", "", "rukpak-kapp")).To(BeTrue())
		Expect(canIName(ctx, "update", "admissionregistration.k8s.io", "validatingwebhookconfigurations", "", "someone-elses")).To(BeFalse())
		Expect(canI(ctx, "patch", "apiextensions.k8s.io", "customresourcedefinitions", "")).To(BeFalse())
		// Both API generations: the conversion webhook's CA goes into the
		// BundleDeployment CRD and no other; v1alpha1 Bundles are made,
		// deleted and reported on, and patched only to take rukpak's
		// finalizer off, never updated.
		Expect(canIName(ctx, "update", "apiextensions.k8s.io", "customresourcedefinitions", "", "bundledeployments.core.rukpak.io")).To(BeTrue())
		Expect(canIName(ctx, "update", "apiextensions.k8s.io", "customresourcedefinitions", "", "bundles.core.rukpak.io")).To(BeFalse())
		Expect(canI(ctx, "update", "apiextensions.k8s.io", "customresourcedefinitions", "")).To(BeFalse())
		Expect(canI(ctx, "create", "core.rukpak.io", "bundles", "")).To(BeTrue())
		Expect(canI(ctx, "delete", "core.rukpak.io", "bundles", "")).To(BeTrue())
		Expect(canI(ctx, "patch", "core.rukpak.io", "bundles/status", "")).To(BeTrue())
		Expect(canI(ctx, "update", "core.rukpak.io", "bundles", "")).To(BeFalse())
		// Catalogs: OperatorCatalogs are read and reported on, never made;
		// their Packages are written in any namespace.
		Expect(canI(ctx, "patch", "catalogs.rukpak-kapp.dev", "operatorcatalogs/status", "default")).To(BeTrue())
		Expect(canI(ctx, "create", "catalogs.rukpak-kapp.dev", "operatorcatalogs", "default")).To(BeFalse())
		Expect(canI(ctx, "create", "data.packaging.carvel.dev", "packages", "default")).To(BeTrue())
		Expect(canI(ctx, "watch", "data.packaging.carvel.dev", "packagemetadatas", "")).To(BeTrue())
		// A catalog install's PackageInstall is read by name (the upgrade
		// notice's Event regards it), never listed or written outside the
		// system namespace.
		Expect(canI(ctx, "get", "packaging.carvel.dev", "packageinstalls", "default")).To(BeTrue())
		Expect(canI(ctx, "list", "packaging.carvel.dev", "packageinstalls", "default")).To(BeFalse())
		Expect(canI(ctx, "patch", "packaging.carvel.dev", "packageinstalls", "default")).To(BeFalse())
		// A catalog's pull secret is read only where the namespace binds
		// rukpak-kapp-catalog-pull-secrets (config/catalogs) to the adapter.
		Expect(canI(ctx, "get", "", "secrets", "default")).To(BeFalse())
		// A catalog bundle's dependencies are installed only where the
		// namespace binds rukpak-kapp-catalog-dependencies to the adapter.
		Expect(canI(ctx, "create", "packaging.carvel.dev", "packageinstalls", "default")).To(BeFalse())
	})
})
