package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// templateStepCap bounds a wait for a template step of these specs to end.
// Each is CPU-bound work (the slow chart is about 20 s of CPU on a quiet
// machine, so that it outlasts the deadline on a fast one; the YAML bomb
// runs until ytt has filled the sidecar's memory), so its length is that
// work divided by the share of a core the machine leaves it: under make
// test's four lanes on two cores the chart's step took 3m10s, a tenth of a
// core. The waits are on the step's end, which kapp-controller records;
// the cap only says that the step ends.
const templateStepCap = 10 * time.Minute

// templateStepEnded is true once kapp-controller has recorded the end of a
// template step of the App name later than after (it records whole
// seconds), or once the App is gone. A step that ended because
// kapp-controller lost its own process (status.LostChild) does not count:
// kapp-controller runs it again.
func templateStepEnded(ctx context.Context, name string, after time.Time) func() (bool, error) {
	return func() (bool, error) {
		app, err := getApp(ctx, name)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		t := app.Status.Template
		return t != nil && t.UpdatedAt.Time.After(after) && !status.LostChild(t.Error), nil
	}
}

// deleteAfterTemplateStep deletes the BundleDeployment name and waits for
// the template step under way, if any (kapp-controller cannot cancel one,
// so the App's delete comes after it; what is said of that step), to end,
// then for the BundleDeployment to go. The end is a template time later
// than the last one read before the delete.
func deleteAfterTemplateStep(ctx context.Context, name, step string) {
	GinkgoHelper()
	app, err := getApp(ctx, name)
	Expect(err).NotTo(HaveOccurred())
	Expect(app.Status.Template).NotTo(BeNil())
	before := app.Status.Template.UpdatedAt.Time
	Expect(env.Client.Delete(ctx, mustBD(ctx, name))).To(Succeed())
	Eventually(templateStepEnded(ctx, name, before)).WithTimeout(templateStepCap).Should(BeTrue(), "the template step under way at the delete (%s) did not end", step)
	Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, objKey("", name), &rukpakv1alpha2.BundleDeployment{}))
	}).WithTimeout(time.Minute).Should(BeTrue(), "gone within a minute of the template step's end")
}

// The harness runs the adapter with --template-timeout=10s and caps the
// memory of kapp-controller's sidecar at 4 GiB, as a container limit would.
var _ = Describe("template steps that do not finish", func() {
	It("reports a chart still rendering at the deadline, then installs it when it finishes", func(ctx context.Context) {
		dir := GinkgoT().TempDir()
		Expect(os.MkdirAll(filepath.Join(dir, "templates"), 0o755)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: slow\nversion: 0.1.0\n"), 0o644)).To(Succeed())
		// About 625 million empty loop turns: some 20 s of CPU on a quiet machine (300 million took
		// 9 s, under the 10 s deadline) and no memory to speak of.
		Expect(os.WriteFile(filepath.Join(dir, "templates", "cm.yaml"), []byte(
			"{{- range $i := until 25000 }}{{ range $j := until 25000 }}{{ end }}{{ end }}\n"+
				"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: slow-chart\n  namespace: default\n"), 0o644)).To(Succeed())
		helmHTTP(dir, "")(ctx, "slow-chart")

		Eventually(getBD(ctx, "slow-chart")).WithTimeout(time.Minute).Should(
			haveCondition("Installed", "False", "InstallFailed", "kapp-controller's template step has run for more than 10s"))
		app, err := getApp(ctx, "slow-chart")
		Expect(err).NotTo(HaveOccurred())
		Expect(app.Status.Fetch).NotTo(BeNil())
		reported := apimeta.FindStatusCondition(mustBD(ctx, "slow-chart").Status.Conditions, rukpakv1alpha2.TypeInstalled).LastTransitionTime
		late := reported.Sub(app.Status.Fetch.UpdatedAt.Time)
		GinkgoWriter.Printf("template deadline reported %s after the fetch ended\n", late)
		// 10 s, plus whole-second timestamps and the status write.
		Expect(late).To(BeNumerically("<=", 13*time.Second))
		Expect(app.Status.ConsecutiveReconcileFailures).To(BeZero(), "kapp-controller had already given up on the step")

		By("waiting for the slow template step to end, then for Installed")
		Eventually(templateStepEnded(ctx, "slow-chart", time.Time{})).WithTimeout(templateStepCap).Should(BeTrue(), "the slow template step did not end")
		Eventually(getBD(ctx, "slow-chart")).WithTimeout(time.Minute).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		Expect(env.Client.Get(ctx, objKey("default", "slow-chart"), &corev1.ConfigMap{})).To(Succeed())
		run := time.Since(app.Status.Fetch.UpdatedAt.Time)

		By("deleting it, which waits for the run the stall repair's probe asked for")
		// The probe, half the deadline into the step, is a new generation
		// that kapp-controller ran as soon as the slow run ended: the same
		// template step again, which kapp-controller cannot cancel (only a
		// deploy), so the App's delete comes after it. On a busy machine
		// that step takes as long as the first did.
		// How long that step takes depends on the CPU the machine has left
		// for it, so the wait is for the step's end, and only then for the
		// delete. The end is a template time later than the last one read
		// before the delete: the probe's run starts in the second the first
		// step ended, which may be the delete's second too. With no step
		// under way the App simply goes.
		deleteAfterTemplateStep(ctx, "slow-chart", fmt.Sprintf("the first took %s", run.Round(time.Second)))
	})

	It("names a YAML bomb, first at the deadline or when ytt runs out of memory, then by ytt's own error", func(ctx context.Context) {
		reconciles := map[string]string{"controller": "bundledeployment"}
		before := scrape(ctx, "controller_runtime_reconcile_total", reconciles)
		plainBD(ctx, "yaml-bomb-memory", dirBundle("yaml-bomb-memory", map[string]string{"manifests/bomb.yaml": billionLaughs(9)}))
		Eventually(getBD(ctx, "yaml-bomb-memory")).WithTimeout(time.Minute).Should(haveCondition("Installed", "False", "InstallFailed", "billion laughs"))
		// The bad-input corpus's bounds: every condition says something, and
		// the wait cost no hot loop.
		for _, c := range mustBD(ctx, "yaml-bomb-memory").Status.Conditions {
			Expect(c.Message).NotTo(BeEmpty(), "condition %s has no message", c.Type)
			Expect(c.Message).NotTo(ContainSubstring("<nil>"))
		}
		Expect(scrape(ctx, "controller_runtime_reconcile_total", reconciles) - before).To(BeNumerically("<=", 30))
		first, err := getApp(ctx, "yaml-bomb-memory")
		Expect(err).NotTo(HaveOccurred())
		Expect(first.Status.ConsecutiveReconcileFailures).To(BeNumerically("<=", 4))
		// ytt's step ends when it has filled the sidecar's 4 GiB: a minute
		// with three busy loops alongside it on two cores, near three in CI.
		Eventually(templateStepEnded(ctx, "yaml-bomb-memory", time.Time{})).WithTimeout(templateStepCap).Should(BeTrue(), "ytt's step did not end")
		Eventually(getBD(ctx, "yaml-bomb-memory")).WithTimeout(time.Minute).Should(haveCondition("Installed", "False", "InstallFailed",
			"invalid bundle: ytt ran out of memory rendering the bundle ("))
		msg := apimeta.FindStatusCondition(mustBD(ctx, "yaml-bomb-memory").Status.Conditions, rukpakv1alpha2.TypeInstalled).Message
		Expect(msg).NotTo(ContainSubstring("goroutine"))
		Expect(len(msg)).To(BeNumerically("<", 600))
		app, err := getApp(ctx, "yaml-bomb-memory")
		Expect(err).NotTo(HaveOccurred())
		Expect(app.Status.ConsecutiveReconcileFailures).To(BeNumerically(">=", 1))

		By("deleting it, which waits for a retry's template step under way")
		// kapp-controller retries the failed App with backoff, and each
		// retry is ytt filling the sidecar's memory again, which it cannot
		// cancel: the App's delete comes after that step, as long as the
		// first took. So the wait is for the step's end, then for the delete.
		deleteAfterTemplateStep(ctx, "yaml-bomb-memory", "a retry's ytt run")
	})
})
