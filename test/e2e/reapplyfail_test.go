package e2e_test

import (
	"context"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

var _ = Describe("a failed re-apply of what is installed", func() {
	It("waits for kapp-controller's retry, and is reported when the retry fails too", func(ctx context.Context) {
		const name = "reapplyfail"
		cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: reapplyfail\n  namespace: default\ndata:\n  a: b\n"
		ref := dirBundle(name, map[string]string{"manifests/cm.yaml": cm})
		plainBD(ctx, name, ref, func(bd *rukpakv1alpha2.BundleDeployment) {
			// kapp-controller's floor, so the re-apply comes soon.
			bd.Annotations = map[string]string{rukpakv1alpha2.AnnotationSyncPeriod: "30s"}
		})
		Eventually(getBD(ctx, name)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))

		By("moving the tag to content without manifests/: the next re-apply fails in its template step")
		Expect(dirBundle(name, map[string]string{"README.md": "no manifests here\n"})).To(Equal(ref))
		failures := func() (int, error) {
			app, err := getApp(ctx, name)
			if err != nil {
				return 0, err
			}
			return app.Status.ConsecutiveReconcileFailures, nil
		}
		Eventually(failures, 90*time.Second, 50*time.Millisecond).Should(Equal(1))
		// kapp-controller retries after 2 s; until then the first failure is
		// not reported (the adapter saw the App's status at once).
		Consistently(func() (*rukpakv1alpha2.BundleDeployment, error) {
			if n, err := failures(); err != nil || n != 1 {
				// The retry ran; what follows is asserted below.
				return nil, StopTrying("the retry ran").Successfully()
			}
			return getBD(ctx, name)()
		}, 1500*time.Millisecond, 100*time.Millisecond).Should(And(
			haveCondition("Installed", "True", "InstallationSucceeded", ""),
			haveCondition("Unpacked", "True", "UnpackSuccessful", ""),
		))

		By("the retry fails too: reported as an invalid bundle, an upgrade's failure since the old objects stay")
		Eventually(getBD(ctx, name), 60*time.Second).Should(haveCondition("Installed", "False", "UpgradeFailed",
			"the bundle has no manifests/ directory"))
		app, err := getApp(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(app.Status.ConsecutiveReconcileFailures).To(BeNumerically(">=", 2))
		Expect(app.Status.Conditions).To(ContainElement(HaveField("Type", kappctrlv1alpha1.ReconcileFailed)))
		deleteAndWait(ctx, name)
	})
})
