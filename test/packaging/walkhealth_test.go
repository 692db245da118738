package packaging_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
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
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "consoleyamlsamples.console.openshift.io"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "console.openshift.io", Scope: apiextensionsv1.ClusterScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "consoleyamlsamples", Singular: "consoleyamlsample", Kind: "ConsoleYAMLSample", ListKind: "ConsoleYAMLSampleList"},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
					Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
					Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
			},
		}
		Expect(env.Client.Create(ctx, crd)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(env.Client.Delete(ctx, crd))).To(Succeed()) })
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "console-samples-health", Labels: map[string]string{"rukpak-kapp.dev/aggregate-to-health": "true"}},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"console.openshift.io"}, Resources: []string{"consoleyamlsamples"}, Verbs: []string{"list", "watch"}}}}
		Expect(env.Client.Create(ctx, role)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(env.Client.Delete(ctx, role))).To(Succeed()) })

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
			bd := &rukpakv1alpha2.BundleDeployment{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
			p := meta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeProgressing)
			g.Expect(p).NotTo(BeNil())
			g.Expect(p.Reason).To(Equal(rukpakv1alpha2.ReasonUpgrading))
			g.Expect(p.Message).To(And(ContainSubstring("1.1.0 is deployed and the next step waits, until "),
				ContainSubstring("for its installed objects to be Current (1.0.0 is installed)"),
				ContainSubstring("ConsoleYAMLSample efs-shared-volume-sample is InProgress: The console is loading the sample")))
		}).WithContext(ctx).Should(Succeed())
		Expect(catalogApp(ctx, bdName).Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "aws-efs-operator.v1.1.0"), "the App waits at the step")

		By("the console rejects the sample (Stalled): an ObjectFailed Event, and the walk stops there")
		setSampleCondition(ctx, "Stalled", "True", "SampleRejected", "The console rejected the sample.")
		Eventually(func(g Gomega) {
			events := &eventsv1.EventList{}
			g.Expect(env.Client.List(ctx, events)).To(Succeed())
			g.Expect(events.Items).To(ContainElement(And(HaveField("Reason", "ObjectFailed"), HaveField("Regarding.Name", bdName),
				HaveField("Note", "ConsoleYAMLSample efs-shared-volume-sample is Failed: The console rejected the sample."))))
		}).WithContext(ctx).Should(Succeed())
		Eventually(updated).WithContext(ctx).Should(Receive(HaveOccurred()), "kctrl reports the stopped walk")
		bd := &rukpakv1alpha2.BundleDeployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		installed := meta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled)
		Expect(installed).NotTo(BeNil())
		Expect(installed.Status).To(BeEquivalentTo("False"))
		Expect(installed.ObservedGeneration).To(Equal(bd.Generation))
		Expect(installed.Reason).To(Equal(rukpakv1alpha2.ReasonUpgradeFailed))
		Expect(installed.Message).To(And(
			ContainSubstring("The upgrade along channel stable (1.0.0 → 1.1.0 → 1.2.0 → 2.0.0) stopped at 1.1.0; 1.0.0 stays installed"),
			ContainSubstring("1.1.0 is deployed, and its installed objects are not healthy"),
			ContainSubstring("ConsoleYAMLSample efs-shared-volume-sample is Failed: The console rejected the sample")))
		progressing := meta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeProgressing)
		Expect(progressing).NotTo(BeNil())
		Expect(progressing.Reason).To(Equal(rukpakv1alpha2.ReasonUpgradeStopped))
		Expect(catalogApp(ctx, bdName).Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "aws-efs-operator.v1.1.0"), "the App stays at the step")
		Consistently(upgradeSteps).WithContext(ctx).WithArguments(bdName).WithTimeout(5*time.Second).Should(Equal([]string{
			"Upgrading along channel stable (1.0.0 → 1.1.0 → 1.2.0 → 2.0.0): installing 1.1.0, step 1 of 3",
		}), "the walk went no further than the step that is not healthy")

		By("kctrl package installed update -i efs --values-file (healthExpressions: samples are always Current): the walk goes on to 2.0.0")
		values := "installNamespace: " + installNS + "\nhealthExpressions: |\n  - apiVersion: console.openshift.io/v1\n    kind: ConsoleYAMLSample\n    current: \"true\"\n"
		// The values change only the BundleDeployment's annotations, so its
		// generation: kapp's wait right after the apply can still read the
		// stop the adapter said of that generation, and kctrl then reports
		// it; kapp-controller's retry reads the walk's outcome.
		_ = kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlInstalledUpdateValues(ctx, env.ControlPlane.Config, ns, install, []byte(values))
		})
		Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
			g.Expect(bd.Annotations).To(HaveKeyWithValue("core.rukpak.io/health-expressions", ContainSubstring("kind: ConsoleYAMLSample")))
			g.Expect(meta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled)).To(And(HaveField("Status", BeEquivalentTo("True")),
				HaveField("ObservedGeneration", bd.Generation), HaveField("Message", ContainSubstring("1.0.0 → 1.1.0 → 1.2.0 → 2.0.0"))))
		}).WithContext(ctx).Should(Succeed())
		Expect(catalogApp(ctx, bdName).Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "aws-efs-operator.v2.0.0"))
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
