package e2e_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var _ = Describe("a delete that cannot finish", func() {
	It("shows why on the BundleDeployment, and finishes once the install account is back", func(ctx context.Context) {
		const sa = "doomed-installer"
		account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: harness.SystemNamespace}}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: sa},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: harness.SystemNamespace}},
		}
		Expect(env.Client.Create(ctx, account)).To(Succeed())
		Expect(env.Client.Create(ctx, binding)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, binding) })

		plainBD(ctx, "stuck-delete", images["plain-v0/valid"], func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Annotations = map[string]string{rukpakv1alpha2.AnnotationServiceAccount: sa}
		})
		Eventually(getBD(ctx, "stuck-delete")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))

		By("removing the account kapp deletes with, then deleting the BundleDeployment")
		Expect(env.Client.Delete(ctx, account)).To(Succeed())
		Expect(env.Client.Delete(ctx, &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: "stuck-delete"}})).To(Succeed())
		Eventually(getBD(ctx, "stuck-delete")).Should(haveCondition("Installed", "False", "DeleteFailed", sa))
		Consistently(getBD(ctx, "stuck-delete")).WithTimeout(5*time.Second).Should(HaveField("DeletionTimestamp", Not(BeNil())),
			"the BundleDeployment must stay, showing why, instead of vanishing with its objects left behind")
		Expect(ownedCRDs(ctx, "stuck-delete")()).To(HaveLen(8))

		By("the documented way out: give the account back, and the delete resumes")
		account.ResourceVersion = ""
		Expect(env.Client.Create(ctx, account)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, account) })
		Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: "stuck-delete"}, &rukpakv1alpha2.BundleDeployment{}))
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(BeTrue())
		Expect(ownedCRDs(ctx, "stuck-delete")()).To(BeEmpty())
	})
})
