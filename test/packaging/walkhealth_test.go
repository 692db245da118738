package packaging_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// A sample for the console that every version's bundle ships (status is
// the console's to write: its CRD has a status subresource).
const consoleSample = `apiVersion: console.openshift.io/v1
kind: ConsoleYAMLSample
metadata:
  name: efs-shared-volume-sample
spec:
  targetResource:
    apiVersion: aws-efs.managed.openshift.io/v1alpha1
    kind: SharedVolume
  title: A shared volume
  description: An EFS access point as a volume.
  yaml: "kind: SharedVolume"
`

// A three-hop walk (1.0.0 → 1.1.0 → 1.2.0 → 2.0.0) over a bundle whose
// console sample the console is still loading: kapp-controller deploys
// the first step (kapp does not judge the kind), the next waits for the
// sample, and when the console rejects it (Stalled) the walk stops there,
// naming it, with the version before it installed.
var _ = Describe("walking a channel over a step that is not healthy", func() {
	It("waits at a step whose installed object is in progress, stops there when it turns Failed, naming it, with the step before installed, and goes on once the install's values judge the kind", func(ctx context.Context) {
		const ns, install, installNS = "catalog-walk-health", "efs", "catalog-walk-health-op"
		bdName := install + "." + ns
		createNamespace(ctx, ns)

		By("the console's ConsoleYAMLSample kind served, and granted to the adapter's health role")
		consoleSamples(ctx)

		sample := map[string]string{"sample.yaml": consoleSample}
		installEfs(ctx, ns, install, installNS, pushWalkCatalogWith(ctx, "walk-health", "",
			map[string]map[string]string{"1.0.0": sample, "1.1.0": sample, "1.2.0": sample, "2.0.0": sample}))

		By("the console is still loading the sample: Healthy=False names it InProgress")
		setSampleCondition(ctx, "Ready", "False", "Loading", "The console is loading the sample.")
		Eventually(healthyMessage).WithContext(ctx).WithArguments(bdName).Should(
			ContainSubstring("ConsoleYAMLSample efs-shared-volume-sample is InProgress: The console is loading the sample"))

		By("kctrl package installed update -i efs --version 2.0.0: 1.1.0 is deployed, and the next step waits for the sample")
		updated := make(chan error, 1)
		go func() {
			defer GinkgoRecover()
			updated <- kctrl(ctx, func(ctx context.Context) error {
				return harness.KctrlInstalledUpdate(ctx, env.ControlPlane.Config, ns, install, "2.0.0")
			})
		}()
		Eventually(func(g Gomega) {
			p := installCondition(ctx, ns, install, catalogsv1alpha1.TypeProgressing)
			g.Expect(p).NotTo(BeNil())
			g.Expect(p.Reason).To(Equal(catalogsv1alpha1.ReasonUpgrading))
			g.Expect(p.Message).To(And(ContainSubstring("1.1.0 is deployed and the next step waits, until "),
				ContainSubstring("for its installed objects to be Current (1.0.0 is installed)"),
				ContainSubstring("ConsoleYAMLSample efs-shared-volume-sample is InProgress: The console is loading the sample")))
		}).WithContext(ctx).Should(Succeed())
		bd := &rukpakv1alpha2.BundleDeployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "aws-efs-operator.v1.1.0"), "the BundleDeployment waits at the step")

		By("the console rejects the sample (Stalled): an ObjectFailed Event, and the walk stops there")
		setSampleCondition(ctx, "Stalled", "True", "SampleRejected", "The console rejected the sample.")
		Eventually(func(g Gomega) {
			events := &eventsv1.EventList{}
			g.Expect(env.Client.List(ctx, events)).To(Succeed())
			g.Expect(events.Items).To(ContainElement(And(HaveField("Reason", "ObjectFailed"), HaveField("Regarding.Name", bdName),
				HaveField("Note", "ConsoleYAMLSample efs-shared-volume-sample is Failed: The console rejected the sample."))))
		}).WithContext(ctx).Should(Succeed())
		Eventually(updated).WithContext(ctx).Should(Receive(HaveOccurred()), "kctrl reports the stopped walk")
		oi := operatorInstall(ctx, ns, install)
		installed := meta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeInstalled)
		Expect(installed).NotTo(BeNil())
		Expect(installed.Status).To(BeEquivalentTo("False"))
		Expect(installed.ObservedGeneration).To(Equal(oi.Generation))
		Expect(installed.Reason).To(Equal(catalogsv1alpha1.ReasonUpgradeFailed))
		Expect(installed.Message).To(And(
			ContainSubstring("The upgrade along channel stable (1.0.0 → 1.1.0 → 1.2.0 → 2.0.0) stopped at 1.1.0; 1.0.0 stays installed"),
			ContainSubstring("1.1.0 is deployed, and its installed objects are not healthy"),
			ContainSubstring("ConsoleYAMLSample efs-shared-volume-sample is Failed: The console rejected the sample")))
		progressing := meta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeProgressing)
		Expect(progressing).NotTo(BeNil())
		Expect(progressing.Reason).To(Equal(catalogsv1alpha1.ReasonUpgradeStopped))
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "aws-efs-operator.v1.1.0"), "the BundleDeployment stays at the step")
		Consistently(upgradeSteps).WithContext(ctx).WithArguments(ns, install).WithTimeout(5*time.Second).Should(Equal([]string{
			"Upgrading along channel stable (1.0.0 → 1.1.0 → 1.2.0 → 2.0.0): installing 1.1.0, step 1 of 3",
		}), "the walk went no further than the step that is not healthy")

		By("kctrl package installed update -i efs --values-file (healthExpressions: samples are always Current): the walk goes on to 2.0.0")
		values := "installNamespace: " + installNS + "\nhealthExpressions: |\n  - apiVersion: console.openshift.io/v1\n    kind: ConsoleYAMLSample\n    current: \"true\"\n"
		// The values change only the BundleDeployment's annotations, so not
		// its generation: the step's Healthy read right after they land can
		// still be the one judged before, which stops the walk once more and
		// fails kapp's wait; kapp-controller's retry, seconds later, reads
		// the walk's outcome.
		_ = kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlInstalledUpdateValues(ctx, env.ControlPlane.Config, ns, install, []byte(values))
		})
		Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
			g.Expect(bd.Annotations).To(HaveKeyWithValue("core.rukpak.io/health-expressions", ContainSubstring("kind: ConsoleYAMLSample")))
			g.Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "aws-efs-operator.v2.0.0"))
			oi := operatorInstall(ctx, ns, install)
			g.Expect(meta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeInstalled)).To(And(HaveField("Status", BeEquivalentTo("True")),
				HaveField("ObservedGeneration", oi.Generation), HaveField("Message", ContainSubstring("1.0.0 → 1.1.0 → 1.2.0 → 2.0.0"))))
		}).WithContext(ctx).Should(Succeed())
		Eventually(reconciled).WithContext(ctx).WithArguments(ns, install).WithTimeout(2*time.Minute).Should(BeTrue(), "kctrl package installed list says Reconcile succeeded after kapp-controller's retry")
	}, SpecTimeout(6*time.Minute))
})

// setSampleCondition writes the console sample's one condition, as the
// console would (its status subresource).
func setSampleCondition(ctx context.Context, condType, status, reason, message string) {
	GinkgoHelper()
	Eventually(func() error {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("console.openshift.io/v1")
		u.SetKind("ConsoleYAMLSample")
		if err := env.Client.Get(ctx, client.ObjectKey{Name: "efs-shared-volume-sample"}, u); err != nil {
			return err
		}
		u.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": condType, "status": status, "reason": reason,
			"message": message, "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
		return env.Client.Status().Update(ctx, u)
	}).WithContext(ctx).Should(Succeed())
}

// healthyMessage is the BundleDeployment's Healthy message.
func healthyMessage(ctx context.Context, name string) (string, error) {
	bd := &rukpakv1alpha2.BundleDeployment{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, bd); err != nil {
		return "", err
	}
	if h := meta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeHealthy); h != nil {
		return h.Message, nil
	}
	return "", nil
}
