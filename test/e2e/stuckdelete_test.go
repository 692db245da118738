package e2e_test

import (
	"context"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// stuckDelete installs name with its own install account, removes the
// account and deletes the BundleDeployment, which then cannot finish. It
// returns the removed account.
func stuckDelete(ctx context.Context, name string) *corev1.ServiceAccount {
	sa := name + "-installer"
	account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: harness.SystemNamespace}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: sa},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: harness.SystemNamespace}},
	}
	Expect(env.Client.Create(ctx, account)).To(Succeed())
	Expect(env.Client.Create(ctx, binding)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, binding) })

	plainBD(ctx, name, images["hello"], func(bd *rukpakv1alpha2.BundleDeployment) {
		bd.Annotations = map[string]string{rukpakv1alpha2.AnnotationServiceAccount: sa}
	})
	Eventually(getBD(ctx, name)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))

	By("removing the account kapp deletes with, then deleting the BundleDeployment")
	Expect(env.Client.Delete(ctx, account)).To(Succeed())
	Expect(env.Client.Delete(ctx, &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	Eventually(getBD(ctx, name)).Should(haveCondition("Installed", "False", "DeleteFailed", sa))
	Consistently(getBD(ctx, name)).WithTimeout(5*time.Second).Should(HaveField("DeletionTimestamp", Not(BeNil())),
		"the BundleDeployment must stay, showing why, instead of vanishing with its objects left behind")
	Expect(ownedCRDs(ctx, name)()).To(HaveLen(1))
	account.ResourceVersion = ""
	return account
}

func bdGone(ctx context.Context, name string) func() bool {
	return func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: name}, &rukpakv1alpha2.BundleDeployment{}))
	}
}

var _ = Describe("a delete that cannot finish", func() {
	It("shows why on the BundleDeployment, and finishes once the install account is back", func(ctx context.Context) {
		account := stuckDelete(ctx, "stuck-delete")

		By("the documented way out: give the account back, and the delete resumes")
		Expect(env.Client.Create(ctx, account)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, account) })
		Eventually(bdGone(ctx, "stuck-delete")).WithContext(ctx).WithTimeout(3 * time.Minute).Should(BeTrue())
		Expect(ownedCRDs(ctx, "stuck-delete")()).To(BeEmpty())
	})

	It("ends when the App is released, leaving the installed objects in place, labelled", func(ctx context.Context) {
		stuckDelete(ctx, "stuck-release")

		By("the documented give-up path: remove kapp-controller's finalizer from the App")
		app := &kappctrlv1alpha1.App{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: "stuck-release"}, app)).To(Succeed())
		Expect(env.Client.Patch(ctx, app, client.RawPatch(client.Merge.Type(), []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
		Eventually(bdGone(ctx, "stuck-release")).WithContext(ctx).Should(BeTrue())
		left, err := ownedCRDs(ctx, "stuck-release")()
		Expect(err).NotTo(HaveOccurred())
		Expect(left).To(HaveLen(1), "released objects stay, found by their owner label")
		// Removed by hand, as docs/bundledeployments.md says, so later specs can install
		// the same bundle.
		for _, o := range []client.Object{
			&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: left[0]}},
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-settings"}},
		} {
			Expect(env.Client.Delete(ctx, o)).To(Succeed())
		}
	})
})
