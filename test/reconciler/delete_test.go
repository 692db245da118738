package reconciler_test

import (
	"context"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
)

var _ = Describe("deleting a BundleDeployment", func() {
	It("deletes its App, shows the delete and its failure, and lets go once kapp-controller removed what was installed", func(ctx context.Context) {
		const name = "delete-paths"
		bdtest.PlainBD(ctx, name, images["plain-v0/valid"])
		appFor(ctx, name, 1)
		holdApp(name)
		appSucceeded(ctx, name, pinned["plain-v0/valid"])
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))

		Expect(env.Client.Delete(ctx, bdtest.MustBD(ctx, name))).To(Succeed())
		Eventually(func(g Gomega) {
			app, err := bdtest.GetApp(ctx, name)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(app.DeletionTimestamp.IsZero()).To(BeFalse())
			g.Expect(app.Spec.NoopDelete).To(BeFalse(), "a delete removes what was installed")
		}).WithContext(ctx).Should(Succeed())
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "False", "Deleting", ""))

		setAppStatus(ctx, name, func(st *kappctrlv1alpha1.AppStatus) {
			st.Conditions = []kappctrlv1alpha1.Condition{{Type: kappctrlv1alpha1.DeleteFailed, Status: corev1.ConditionTrue,
				Message: `Deleting: Getting service account: serviceaccounts "rukpak-kapp-installer" not found`}}
		})
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "False", "DeleteFailed", `serviceaccounts "rukpak-kapp-installer" not found`))

		app, err := bdtest.GetApp(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		controllerutil.RemoveFinalizer(app, translate.KappControllerFinalizer)
		Expect(env.Client.Update(ctx, app)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: name}, &rukpakv1alpha2.BundleDeployment{}))
		}).WithTimeout(15 * time.Second).Should(BeTrue())
	})
})

var _ = Describe("the App of a BundleDeployment", func() {
	It("follows the install account and sync period annotations", func(ctx context.Context) {
		const name = "app-annotations"
		bdtest.PlainBD(ctx, name, images["plain-v0/valid"], func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Annotations = map[string]string{
				rukpakv1alpha2.AnnotationServiceAccount: "tenant-installer",
				rukpakv1alpha2.AnnotationSyncPeriod:     "45s",
			}
		})
		app := appFor(ctx, name, 1)
		Expect(app.Spec.ServiceAccountName).To(Equal("tenant-installer"))
		Expect(app.Spec.SyncPeriod).To(Equal(&metav1.Duration{Duration: 45 * time.Second}))
		Expect(app.Spec.DefaultNamespace).To(Equal("default"))
	})
})
