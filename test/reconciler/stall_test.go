package reconciler_test

import (
	"context"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
)

// Here the spec is kapp-controller: it writes the App's status as
// kapp-controller v0.53.1 does during a run (adapter/status/run.go), and
// stops writing as a kapp-controller that lost the run would. The suite's
// template deadline is 10 s, so a template step is asked about at 5 s.

// appTemplating: the run fetched (now) and ytt or helm template runs.
func appTemplating(ctx context.Context, name string) {
	setAppStatus(ctx, name, func(st *kappctrlv1alpha1.AppStatus) {
		st.Conditions = appCondition(kappctrlv1alpha1.Reconciling)
		st.Fetch = fetchOK(pinned["plain-v0/valid"])
	})
}

// appPickedUp: kapp-controller began a run of the App's current spec; the
// sub-statuses are still the run before's.
func appPickedUp(ctx context.Context, name string) {
	app, err := bdtest.GetApp(ctx, name)
	Expect(err).NotTo(HaveOccurred())
	before := app.Status
	setAppStatus(ctx, name, func(st *kappctrlv1alpha1.AppStatus) {
		st.Conditions = appCondition(kappctrlv1alpha1.Reconciling)
		st.Fetch, st.Template, st.Deploy = before.Fetch, before.Template, before.Deploy
	})
}

// rerunOf is the App's pending request for another run, if any.
func rerunOf(ctx context.Context, name string) func() (string, error) {
	return func() (string, error) {
		app, err := bdtest.GetApp(ctx, name)
		if err != nil {
			return "", err
		}
		r, ok := status.PendingRerun(app)
		if !ok {
			return "", nil
		}
		return r.Why, nil
	}
}

// noFailureSeen says no version a watching client saw named a failure.
func noFailureSeen(history *bdHistory) {
	GinkgoHelper()
	for _, v := range history.seen() {
		for _, c := range v.Status.Conditions {
			Expect(c.Reason).NotTo(BeElementOf(rukpakv1alpha2.ReasonInstallFailed, rukpakv1alpha2.ReasonUpgradeFailed, rukpakv1alpha2.ReasonUnpackFailed),
				"resourceVersion %s: %s", v.ResourceVersion, c.Message)
		}
	}
}

var _ = Describe("runs kapp-controller lost", func() {
	It("leaves a deploy alone while kapp-controller reports it, and asks for a new run once it has not for 30 s", func(ctx context.Context) {
		const name = "stall-deploy"
		bdtest.PlainBD(ctx, name, images["plain-v0/valid"])
		appFor(ctx, name, 1)
		history := watchBD(ctx, name)
		gen, err := appGeneration(ctx, name)()
		Expect(err).NotTo(HaveOccurred())

		// That reports keep moving the timer beyond StepQuiet is
		// TestStallRepairFollowsReports's, on a fake clock; here a few
		// reports go through the real watch.
		By("kapp waiting for readiness, its progress written every 2 s")
		var lost time.Time
		for end := time.Now().Add(4 * status.DeployHeartbeat); time.Now().Before(end); {
			Expect(appGeneration(ctx, name)()).To(Equal(gen), "a run that reports its progress was asked about")
			appDeploying(ctx, name, pinned["plain-v0/valid"])
			lost = time.Now()
			time.Sleep(status.DeployHeartbeat)
		}
		Expect(bdtest.MustBD(ctx, name)).To(bdtest.HaveCondition("Installed", "Unknown", "Installing",
			"kapp applied the bundle and is waiting for its objects to become ready"))

		By("kapp-controller killed: the status stops changing")
		Eventually(appGeneration(ctx, name)).WithTimeout(status.StepQuiet + 5*time.Second).Should(Equal(gen + 1))
		took := time.Since(lost)
		GinkgoWriter.Printf("a deploy that stopped reporting was asked about %s after its last report\n", took)
		Expect(took).To(BeNumerically(">=", status.StepQuiet-time.Second))
		Expect(rerunOf(ctx, name)()).To(Equal(status.RerunStalled))
		Eventually(func() ([]string, error) { return bdtest.EventNotes(ctx, name) }).Should(ContainElement(ContainSubstring("wrote nothing for 30s")))
		Expect(bdtest.MustBD(ctx, name)).To(bdtest.HaveCondition("Installed", "Unknown", "Installing", "waiting for its objects"),
			"the request does not change what the status says")

		By("the restarted kapp-controller runs the App: nothing more is asked for")
		appPickedUp(ctx, name)
		appSucceeded(ctx, name, pinned["plain-v0/valid"])
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))
		Consistently(appGeneration(ctx, name), 3*time.Second).Should(Equal(gen + 1))
		noFailureSeen(history)
	})

	It("asks about a template step at half the deadline: a lost run starts over and the bundle is never blamed", func(ctx context.Context) {
		const name = "stall-template-lost"
		bdtest.PlainBD(ctx, name, images["plain-v0/valid"])
		appFor(ctx, name, 1)
		history := watchBD(ctx, name)
		gen, err := appGeneration(ctx, name)()
		Expect(err).NotTo(HaveOccurred())

		fetched := time.Now()
		appTemplating(ctx, name)
		Eventually(appGeneration(ctx, name)).WithTimeout(10 * time.Second).Should(Equal(gen + 1))
		GinkgoWriter.Printf("a template step was asked about %s after the fetch\n", time.Since(fetched))
		Expect(time.Since(fetched)).To(BeNumerically(">=", 4*time.Second))

		By("kapp-controller had lost the run: it picks the request up at once and runs the App again")
		appPickedUp(ctx, name)
		appTemplating(ctx, name)
		appDeploying(ctx, name, pinned["plain-v0/valid"])
		appSucceeded(ctx, name, pinned["plain-v0/valid"])
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))
		noFailureSeen(history)
	})

	It("reports a template step still running at the deadline, lets the run finish, and asks about that spec's steps no more", func(ctx context.Context) {
		const name = "stall-template-slow"
		bdtest.PlainBD(ctx, name, images["plain-v0/valid"])
		appFor(ctx, name, 1)
		gen, err := appGeneration(ctx, name)()
		Expect(err).NotTo(HaveOccurred())

		fetched := time.Now()
		appTemplating(ctx, name)
		Eventually(appGeneration(ctx, name)).WithTimeout(10 * time.Second).Should(Equal(gen + 1))

		By("the step runs on: kapp-controller leaves the request waiting")
		Eventually(bdtest.GetBD(ctx, name)).WithTimeout(15 * time.Second).Should(bdtest.HaveCondition("Installed", "False", "InstallFailed",
			"kapp-controller's template step has run for more than 10s on this bundle without finishing"))
		reported := time.Since(fetched)
		GinkgoWriter.Printf("a template step still running was reported %s after the fetch\n", reported)
		Expect(reported).To(BeNumerically(">=", 10*time.Second))

		By("the step ends: that run's writes still carry the generation before the request")
		writeOldRun := func(set func(*kappctrlv1alpha1.AppStatus)) {
			setAppStatus(ctx, name, func(st *kappctrlv1alpha1.AppStatus) {
				set(st)
				st.ObservedGeneration = gen
			})
		}
		writeOldRun(func(st *kappctrlv1alpha1.AppStatus) {
			st.Conditions = appCondition(kappctrlv1alpha1.ReconcileSucceeded)
			st.Fetch = fetchOK(pinned["plain-v0/valid"])
			st.Template = &kappctrlv1alpha1.AppStatusTemplate{UpdatedAt: metav1.Now()}
			st.Deploy = &kappctrlv1alpha1.AppStatusDeploy{UpdatedAt: metav1.Now(), Finished: true}
		})
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""),
			"the run before the request deployed the same spec")

		By("the requested run's template step is as slow: not asked about again")
		appPickedUp(ctx, name)
		appTemplating(ctx, name)
		Consistently(appGeneration(ctx, name), 8*time.Second).Should(Equal(gen + 1))
		Expect(bdtest.MustBD(ctx, name)).To(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))
	})
})
