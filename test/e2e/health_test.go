package e2e_test

import (
	"context"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var _ = Describe("the health of an installed custom resource", func() {
	It("is Unknown while it says nothing, follows its Ready condition within seconds, and is named", func(ctx context.Context) {
		ref, _, err := env.Registry.PushDir(filepath.Join("testdata", "health"), "bundles/health:v1")
		Expect(err).NotTo(HaveOccurred())
		plainBD(ctx, "health-cr", ref)

		By("a Widget whose controller set no condition: Unknown, never healthy by default")
		Eventually(getBD(ctx, "health-cr"), 2*time.Minute).Should(And(
			haveCondition("Installed", "True", "InstallationSucceeded", ""),
			haveCondition("Healthy", "Unknown", "HealthUnknown",
				"Widget default/w1 is Unknown: it has no Ready condition, nor a Reconciling or Stalled one, that says whether it is ready")))

		By("its controller says Ready")
		setWidgetReady(ctx, "True", "Running", "All 3 nodes are up.")
		Eventually(getBD(ctx, "health-cr")).Should(haveCondition("Healthy", "True", "Healthy", ""))

		By("Ready turns False: Healthy=False within 5 s, naming it")
		turned := time.Now()
		setWidgetReady(ctx, "False", "NoQuorum", "2 of 3 nodes are down.")
		Eventually(getBD(ctx, "health-cr"), 5*time.Second).Should(haveCondition("Healthy", "False", "Unhealthy",
			"1 of the 1 installed objects judged is not Current (1 InProgress): Widget default/w1 is InProgress: 2 of 3 nodes are down"))
		GinkgoWriter.Printf("Healthy=False %s after the Widget's Ready turned False\n", time.Since(turned).Round(10*time.Millisecond))
		Expect(mustBD(ctx, "health-cr")).To(haveCondition("Installed", "True", "InstallationSucceeded", ""))

		By("and True again when it recovers")
		setWidgetReady(ctx, "True", "Running", "All 3 nodes are up.")
		Eventually(getBD(ctx, "health-cr"), 5*time.Second).Should(haveCondition("Healthy", "True", "Healthy", ""))
	})
})

func widget() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("health.example.com/v1")
	u.SetKind("Widget")
	return u
}

// setWidgetReady writes the Widget's Ready condition as its controller
// would (the status subresource).
func setWidgetReady(ctx context.Context, status, reason, message string) {
	GinkgoHelper()
	Eventually(func() error {
		w := widget()
		if err := env.Client.Get(ctx, objKey("default", "w1"), w); err != nil {
			return err
		}
		cond := map[string]any{"type": "Ready", "status": status, "reason": reason, "message": message,
			"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}
		if err := unstructured.SetNestedSlice(w.Object, []any{cond}, "status", "conditions"); err != nil {
			return err
		}
		return env.Client.Status().Update(ctx, w)
	}).WithContext(ctx).Should(Succeed())
}
