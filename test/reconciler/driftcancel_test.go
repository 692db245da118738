package reconciler_test

import (
	"context"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/drift"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
)

func appCanceled(ctx context.Context, name string) func() (bool, error) {
	return func() (bool, error) {
		app, err := bdtest.GetApp(ctx, name)
		if err != nil {
			return false, err
		}
		return app.Spec.Canceled, nil
	}
}

func setCanceled(ctx context.Context, name, writer string) {
	GinkgoHelper()
	app, err := bdtest.GetApp(ctx, name)
	Expect(err).NotTo(HaveOccurred())
	Expect(env.Client.Patch(ctx, app, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"canceled":true}}`)), client.FieldOwner(writer))).To(Succeed())
}

var _ = Describe("drift repair of a run under way", func() {
	It("cancels a first install's run when what it applied is deleted, lets kapp-controller run again at once, and reports no failure", func(ctx context.Context) {
		const name = "drift-cancel"
		history := watchBD(ctx, name)
		bdtest.PlainBD(ctx, name, images["plain-v0/valid"])
		appFor(ctx, name, 1)
		gen, err := appGeneration(ctx, name)()
		Expect(err).NotTo(HaveOccurred())
		appDeploying(ctx, name, pinned["plain-v0/valid"])
		cm := installedConfigMap(ctx, name, name+"-settings")

		By("deleting what the run applied: two writes, canceled set and cleared, one request")
		Expect(env.Client.Delete(ctx, cm)).To(Succeed())
		Eventually(appGeneration(ctx, name), 5*time.Second).Should(Equal(gen + 2))
		Expect(appCanceled(ctx, name)()).To(BeFalse(), "canceled cleared with the second write")
		Expect(rerunOf(ctx, name)()).To(Equal(status.RerunCanceled))

		By("the canceled run's failure, while the request waits: Installing, not failed")
		setAppStatus(ctx, name, func(st *kappctrlv1alpha1.AppStatus) {
			// kapp-controller's status of the canceled run reports the
			// run's own generation.
			st.ObservedGeneration = gen
			st.Conditions = appCondition(kappctrlv1alpha1.ReconcileFailed)
			st.Conditions[0].Message = "Deploying: Error (see .status.usefulErrorMessage for details)"
			st.Fetch = fetchOK(pinned["plain-v0/valid"])
			st.Template = &kappctrlv1alpha1.AppStatusTemplate{UpdatedAt: st.Fetch.UpdatedAt}
			st.Deploy = &kappctrlv1alpha1.AppStatusDeploy{StartedAt: st.Fetch.UpdatedAt, UpdatedAt: metav1.Now(), ExitCode: 1,
				Error: "Deploying: Error (see .status.usefulErrorMessage for details)", Stderr: "kapp: Error: Process was canceled"}
			st.UsefulErrorMessage = "kapp: Error: Process was canceled"
			st.ConsecutiveReconcileFailures = 1
		})
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "Unknown", "Installing", "the adapter canceled that run"))
		appSucceeded(ctx, name, pinned["plain-v0/valid"])
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))
		noFailureSeen(history)
	})

	It("clears a canceled=true drift repair left behind, and leaves a user's", func(ctx context.Context) {
		const name = "drift-cancel-left"
		bdtest.PlainBD(ctx, name, images["plain-v0/valid"])
		appFor(ctx, name, 1)
		appSucceeded(ctx, name, pinned["plain-v0/valid"])

		By("as an adapter stopped between the two writes leaves it")
		setCanceled(ctx, name, drift.KickManager)
		Eventually(appCanceled(ctx, name), 5*time.Second).Should(BeFalse())

		By("a user's")
		setCanceled(ctx, name, "someone-by-hand")
		Consistently(appCanceled(ctx, name), 3*time.Second).Should(BeTrue())
	})
})
