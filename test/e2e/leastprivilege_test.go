package e2e_test

import (
	"context"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// namespaceInstaller makes a ServiceAccount that may manage ConfigMaps in
// one tenant namespace only, plus the kapp state it keeps in the system
// namespace.
func namespaceInstaller(ctx context.Context, tenant, sa string) {
	create := func(obj client.Object) {
		ExpectWithOffset(2, env.Client.Create(ctx, obj)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, obj) })
	}
	create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenant}})
	create(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: harness.SystemNamespace}})
	configMaps := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}
	for _, ns := range []string{tenant, harness.SystemNamespace} {
		create(&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns}, Rules: configMaps})
		create(&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: sa},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: harness.SystemNamespace}},
		})
	}
}

var _ = Describe("least privilege installs", func() {
	It("install a namespaced bundle with a namespace-scoped account and refuse cluster-scoped objects clearly", func(ctx context.Context) {
		namespaceInstaller(ctx, "tenant-a", "tenant-a-installer")
		ref, _, err := env.Registry.PushDir(filepath.Join("testdata", "namespaced"), "bundles/namespaced:v1")
		Expect(err).NotTo(HaveOccurred())
		withAccount := func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Annotations = map[string]string{rukpakv1alpha2.AnnotationServiceAccount: "tenant-a-installer"}
			bd.Spec.InstallNamespace = "tenant-a"
		}

		plainBD(ctx, "tenant-namespaced", ref, withAccount)
		Eventually(getBD(ctx, "tenant-namespaced")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "tenant-a", Name: "tenant-settings"}, &corev1.ConfigMap{})).To(Succeed())

		plainBD(ctx, "tenant-crds", images["plain-v0/provides"], withAccount)
		Eventually(getBD(ctx, "tenant-crds")).Should(haveCondition("Installed", "False", "InstallFailed", "forbidden"))
	})
})
