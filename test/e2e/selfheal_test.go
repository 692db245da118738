package e2e_test

import (
	"context"
	"path/filepath"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var _ = Describe("self-healing", func() {
	It("restores an App deleted or edited by hand, and installed objects deleted or edited by hand", func(ctx context.Context) {
		ref, _, err := env.Registry.PushDir(filepath.Join("testdata", "selfheal"), "bundles/selfheal:v1")
		Expect(err).NotTo(HaveOccurred())
		plainBD(ctx, "selfheal", ref, func(bd *rukpakv1alpha2.BundleDeployment) {
			// kapp-controller's floor; drift is repaired at the next sync.
			bd.Annotations = map[string]string{rukpakv1alpha2.AnnotationSyncPeriod: "30s"}
		})
		Eventually(getBD(ctx, "selfheal")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		settings := objKey("default", "selfheal-settings")
		appKey := objKey(harness.SystemNamespace, "selfheal")

		By("deleting the App: kapp-controller removes what it installed, the adapter makes a new App, and it is installed again")
		app := &kappctrlv1alpha1.App{}
		Expect(env.Client.Get(ctx, appKey, app)).To(Succeed())
		oldUID := app.UID
		Expect(env.Client.Delete(ctx, app)).To(Succeed())
		Eventually(func() (*kappctrlv1alpha1.App, error) {
			a := &kappctrlv1alpha1.App{}
			return a, env.Client.Get(ctx, appKey, a)
		}).Should(And(
			HaveField("UID", Not(Equal(oldUID))),
			WithTransform(func(a *kappctrlv1alpha1.App) bool {
				return a.Status.ObservedGeneration == a.Generation && len(a.Status.Conditions) > 0 &&
					a.Status.Conditions[0].Type == kappctrlv1alpha1.ReconcileSucceeded
			}, BeTrue()),
		))
		Eventually(getBD(ctx, "selfheal")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		Expect(env.Client.Get(ctx, settings, &corev1.ConfigMap{})).To(Succeed())

		By("editing the App: the adapter takes its fields back at once")
		Expect(env.Client.Get(ctx, appKey, app)).To(Succeed())
		edited := app.DeepCopy()
		edited.Spec.SyncPeriod = &metav1.Duration{Duration: time.Hour}
		edited.Spec.Deploy = []kappctrlv1alpha1.AppDeploy{{Kapp: &kappctrlv1alpha1.AppDeployKapp{}}}
		Expect(env.Client.Patch(ctx, edited, client.MergeFrom(app), client.FieldOwner("someone-by-hand"))).To(Succeed())
		Eventually(func() (*kappctrlv1alpha1.AppSpec, error) {
			a := &kappctrlv1alpha1.App{}
			return &a.Spec, env.Client.Get(ctx, appKey, a)
		}, 10*time.Second).Should(And(
			HaveField("SyncPeriod.Duration", 30*time.Second),
			HaveField("Deploy", Equal(app.Spec.Deploy)),
		))

		By("deleting and editing an installed object: kapp-controller's next sync restores it, the BD stays Installed")
		cm := &corev1.ConfigMap{}
		Expect(env.Client.Get(ctx, settings, cm)).To(Succeed())
		Expect(env.Client.Delete(ctx, cm)).To(Succeed())
		Eventually(func() error { return env.Client.Get(ctx, settings, &corev1.ConfigMap{}) }, 90*time.Second).Should(Succeed())

		Expect(env.Client.Get(ctx, settings, cm)).To(Succeed())
		before := cm.DeepCopy()
		cm.Data["mode"] = "loose"
		Expect(env.Client.Patch(ctx, cm, client.MergeFrom(before), client.FieldOwner("someone-by-hand"))).To(Succeed())
		Eventually(func() (string, error) {
			c := &corev1.ConfigMap{}
			return c.Data["mode"], env.Client.Get(ctx, settings, c)
		}, 90*time.Second).Should(Equal("strict"))
		Expect(mustBD(ctx, "selfheal")).To(And(
			haveCondition("Installed", "True", "InstallationSucceeded", ""),
			haveCondition("Healthy", "True", "Healthy", ""),
		))
	})
})
