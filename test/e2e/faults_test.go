package e2e_test

import (
	"context"
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

func ownedApps(ctx context.Context, bd string) func() (int, error) {
	return func() (int, error) {
		list := &kappctrlv1alpha1.AppList{}
		err := env.Client.List(ctx, list, client.InNamespace(harness.SystemNamespace), client.MatchingLabels{rukpakv1alpha2.LabelOwnerName: bd})
		return len(list.Items), err
	}
}

// The fault specs stop and start shared processes, so they run alone.
var _ = Describe("faults", Serial, func() {
	It("converge after the adapter is killed mid-install, with no duplicate App and no orphan Secret", func(ctx context.Context) {
		plainBD(ctx, "fault-adapter", tlsImages["hello"], func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Spec.Source.Image.CertificateData = string(env.TLSRegistry.CA.PEM)
		})
		Eventually(ownedApps(ctx, "fault-adapter")).Should(Equal(1))
		env.Adapter.Kill()
		Expect(env.Adapter.Start(ctx)).To(Succeed())

		Eventually(getBD(ctx, "fault-adapter")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		Expect(ownedApps(ctx, "fault-adapter")()).To(Equal(1))
		Expect(contentSecrets(ctx, "fault-adapter")()).To(HaveLen(1))
	})

	It("converge after kapp-controller is killed mid-deploy", func(ctx context.Context) {
		plainBD(ctx, "fault-kc", images["hello"])
		Eventually(func() (string, error) {
			app, err := getApp(ctx, "fault-kc")
			if err != nil || len(app.Status.Conditions) == 0 {
				return "", err
			}
			return string(app.Status.Conditions[0].Type), nil
		}).WithPolling(20 * time.Millisecond).Should(Or(Equal("Reconciling"), Equal("ReconcileSucceeded")))
		env.KappController.KillController()
		Expect(env.KappController.StartController(ctx)).To(Succeed())

		Eventually(getBD(ctx, "fault-kc")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		Expect(ownedCRDs(ctx, "fault-kc")()).To(HaveLen(1))
	})

	It("converge after the API server restarts, and keep following changes", func(ctx context.Context) {
		plainBD(ctx, "fault-apiserver", images["hello"])
		Eventually(getBD(ctx, "fault-apiserver")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		Expect(env.ControlPlane.RestartAPIServer(ctx)).To(Succeed())

		bd, err := getBD(ctx, "fault-apiserver")()
		Expect(err).NotTo(HaveOccurred())
		bd.Spec.Source.Image.Ref = images["plain-v0/provides"]
		Expect(env.Client.Update(ctx, bd)).To(Succeed())
		Eventually(ownedCRDs(ctx, "fault-apiserver")).WithTimeout(3 * time.Minute).Should(ConsistOf("operatorgroups.operators.coreos.com"))
		Eventually(getBD(ctx, "fault-apiserver")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))

		By("going back to the first bundle, then deleting its ConfigMap")
		bd, err = getBD(ctx, "fault-apiserver")()
		Expect(err).NotTo(HaveOccurred())
		bd.Spec.Source.Image.Ref = images["hello"]
		Expect(env.Client.Update(ctx, bd)).To(Succeed())
		Eventually(getBD(ctx, "fault-apiserver")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		// Drift repair watches again: a deleted installed object is back within 5 s.
		// A restarted API server forbids every request for a moment, until
		// its authorizer caught up; each of the adapter's watches retries
		// with backoff and says so in this gauge until it works again. The
		// old watch ended with the stop, so it listed again since: 0 means
		// the new list worked.
		Eventually(func() float64 {
			return scrape(ctx, "rukpak_kapp_drift_watch_failing", map[string]string{"kind": "ConfigMap"})
		}).Should(BeZero())
		settings := objKey("default", "hello-settings")
		Expect(env.Client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello-settings"}})).To(Succeed())
		took := restoredWithin(ctx, 5*time.Second, func() bool { return env.Client.Get(ctx, settings, &corev1.ConfigMap{}) == nil })
		GinkgoWriter.Printf("deleted ConfigMap restored after %s\n", took)
	})
})

var _ = Describe("cost of a broken or idle BundleDeployment", Serial, func() {
	It("backs off a permanently broken bundle and writes nothing while nothing changes", func(ctx context.Context) {
		reconciles := map[string]string{"controller": "bundledeployment"}
		plainBD(ctx, "cost-broken", images["plain-v0/valid"]+"-no-such-tag")
		Eventually(getBD(ctx, "cost-broken")).Should(haveCondition("Unpacked", "False", "UnpackFailed", "no-such-tag"))
		first, err := getBD(ctx, "cost-broken")()
		Expect(err).NotTo(HaveOccurred())
		startReconciles := scrape(ctx, "controller_runtime_reconcile_total", reconciles)
		startApp, err := getApp(ctx, "cost-broken")
		Expect(err).NotTo(HaveOccurred())

		window := 20 * time.Second
		time.Sleep(window)

		last, err := getBD(ctx, "cost-broken")()
		Expect(err).NotTo(HaveOccurred())
		app, err := getApp(ctx, "cost-broken")
		Expect(err).NotTo(HaveOccurred())
		adapterReconciles := scrape(ctx, "controller_runtime_reconcile_total", reconciles) - startReconciles
		attempts := app.Status.ConsecutiveReconcileFailures - startApp.Status.ConsecutiveReconcileFailures
		GinkgoWriter.Printf("over %s: %d kapp-controller fetch attempts (%d in all), %.0f adapter reconciles, BundleDeployment resourceVersion %s -> %s\n",
			window, attempts, app.Status.ConsecutiveReconcileFailures, adapterReconciles, first.ResourceVersion, last.ResourceVersion)

		Expect(last.ResourceVersion).To(Equal(first.ResourceVersion), "the adapter rewrote an unchanged failure")
		// kapp-controller waits 2^n s after n failures: at most 4 tries fit in 20 s once a few have passed.
		Expect(attempts).To(BeNumerically("<=", 4))
		// Each attempt wakes the adapter a few times (status writes of the App); never a hot loop.
		Expect(adapterReconciles).To(BeNumerically("<=", 4*float64(attempts)+4))
	})
})
