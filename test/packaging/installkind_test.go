package packaging_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// Where two of the places that say what a catalog install is move at once:
// kapp-controller's pick and the catalog's revision, a hold and a
// retraction. The OperatorInstall's status is the one answer.
var _ = Describe("a catalog install when its catalog moves at once", func() {
	It("follows the channel to its new head when its pick is withdrawn in the middle of the walk there", func(ctx context.Context) {
		const ns, install, installNS = "install-withdrawn", "efs", "install-withdrawn-op"
		bdName := install + "." + ns
		createNamespace(ctx, ns)
		consoleSamples(ctx)
		sample := map[string]string{"sample.yaml": consoleSample}
		extra := map[string]map[string]string{"1.0.0": sample, "1.1.0": sample, "1.2.0": sample, "2.0.0": sample, "2.1.0": sample}
		installEfs(ctx, ns, install, installNS, pushWalkCatalogWith(ctx, "withdrawn", "", extra, "2.1.0"))
		before := efsUIDs(ctx, bdName, installNS)

		By("the walk's first step waits: the console is still loading the sample 1.1.0 ships")
		setSampleCondition(ctx, "Ready", "False", "Loading", "The console is loading the sample.")
		By("kctrl package installed update -i efs --version '>= 0.0.0' --wait=false: kapp-controller picks the head, 2.1.0")
		Expect(harness.KctrlInstalledUpdateNoWait(ctx, env.ControlPlane.Config, ns, install, ">= 0.0.0")).To(Succeed())
		Eventually(func(g Gomega) {
			oi := operatorInstall(ctx, ns, install)
			g.Expect(oi.Spec.Version).To(Equal("2.1.0"))
			g.Expect(oi.Status.Walk).NotTo(BeNil())
			g.Expect(oi.Status.Walk.Path[oi.Status.Walk.Step]).To(Equal("1.1.0"))
			g.Expect(meta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeProgressing)).To(HaveField("Message", ContainSubstring("1.1.0 is deployed and the next step waits")))
		}).WithContext(ctx).Should(Succeed())

		By("the same moment, the repository moves to a version without 2.1.0 (kctrl package repository update): 2.1.0 is withdrawn, nothing runs it")
		Expect(harness.KctrlRepositoryUpdate(ctx, env.ControlPlane.Config, ns, "efs", pushWalkCatalogWith(ctx, "withdrawn", "", extra))).To(Succeed())
		Eventually(func(g Gomega) {
			list := &datav1alpha1.PackageList{}
			g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
			for _, p := range list.Items {
				g.Expect(p.Spec.Version).NotTo(Equal("2.1.0"))
			}
		}).WithContext(ctx).Should(Succeed())
		By("kapp-controller picks 2.0.0, the channel's new head, and the install follows it there once the sample is loaded")
		Eventually(func(g Gomega) {
			pi := &packagingv1alpha1.PackageInstall{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: install}, pi)).To(Succeed())
			g.Expect(pi.Status.Version).To(Equal("2.0.0"))
			asked := operatorInstall(ctx, ns, install).Status.Asked
			g.Expect(asked).NotTo(BeNil(), "the install names what it is asked for")
			g.Expect(asked.Version).To(Equal("2.0.0"))
		}).WithContext(ctx).Should(Succeed())
		setSampleCondition(ctx, "Ready", "True", "Loaded", "The console loaded the sample.")
		Eventually(func(g Gomega) {
			bd := &rukpakv1alpha2.BundleDeployment{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
			g.Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "aws-efs-operator.v2.0.0"))
			g.Expect(installedAt(bd)).To(BeTrue(), "%+v", bd.Status.Conditions)
			g.Expect(installedVersion(ctx, ns, install)).To(Equal("2.0.0"))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		oi := operatorInstall(ctx, ns, install)
		Expect(meta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeHeld)).To(BeNil(), "nothing is held: the pick was withdrawn, not kept")
		Expect(meta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeInstalled)).To(And(HaveField("Status", metav1.ConditionTrue),
			HaveField("Message", ContainSubstring("kapp-controller picked 2.1.0, which channel stable no longer publishes; its pick now is 2.0.0, which this install follows"))))
		Eventually(upgradeNotice).WithContext(ctx).WithArguments(ns, install).Should(HavePrefix("False " + catalogsv1alpha1.ReasonAtChannelHead))
		Expect(efsUIDs(ctx, bdName, installNS)).To(Equal(before), "the walk recreated nothing")

		By("kapp-controller refuses to render 2.0.0 as a downgrade from its last attempt, 2.1.0: kubectl annotate packageinstall efs packaging.carvel.dev/downgradable=\"\" lets it, and kctrl says Reconcile succeeded")
		pi := &packagingv1alpha1.PackageInstall{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: install}, pi)).To(Succeed())
		patch := client.MergeFrom(pi.DeepCopy())
		if pi.Annotations == nil {
			pi.Annotations = map[string]string{}
		}
		pi.Annotations["packaging.carvel.dev/downgradable"] = ""
		Expect(env.Client.Patch(ctx, pi, patch)).To(Succeed())
		Eventually(reconciled).WithContext(ctx).WithArguments(ns, install).WithTimeout(2 * time.Minute).Should(BeTrue())
		Expect(operatorInstall(ctx, ns, install).Spec.Version).To(Equal("2.0.0"))
		Expect(installIsInstalled(ctx, ns, install)).To(BeTrue())
	}, SpecTimeout(6*time.Minute))

	It("keeps the version a held install runs when its catalog drops it, and lands the install's values on it", func(ctx context.Context) {
		const ns, install, installNS = "install-held-retracted", "prom", "install-held-retracted-op"
		ref := "beta.prometheus." + catalog.DefaultDomain
		bdName := install + "." + ns
		catalogsAPI(ctx)
		createNamespace(ctx, ns)
		dir := relocatedCatalog(ctx)
		cat := newCatalog(ctx, ns, "operators", pushCatalogImage(dir, "catalog/held-retracted:latest"))
		revision := published(ctx, cat, "")

		By("kctrl package install -i prom --version 1.0.0 --values-file (upgradeApproval: Manual), then --version '>= 0.0.0': 2.0.0 is held, 1.0.0 runs")
		DeferCleanup(func(ctx context.Context) {
			Expect(harness.KctrlInstalledDelete(ctx, env.ControlPlane.Config, ns, install)).To(Succeed())
		})
		values := "installNamespace: " + installNS + "\nupgradeApproval: Manual\n"
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlPackageInstall(ctx, env.ControlPlane.Config, harness.KctrlInstall{Namespace: ns, Name: install, Package: ref, Version: "1.0.0",
				Values: []byte(values + "approvedVersion: \"1.0.0\"\n")})
		})).To(Succeed())
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlInstalledUpdateValues(ctx, env.ControlPlane.Config, ns, install, []byte(values))
		})).To(Succeed())
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlInstalledUpdate(ctx, env.ControlPlane.Config, ns, install, ">= 0.0.0")
		})).To(Succeed(), "a hold is no failed reconcile")
		Expect(installCondition(ctx, ns, install, catalogsv1alpha1.TypeHeld)).To(HaveField("Reason", catalogsv1alpha1.ReasonAwaitingApproval))
		before := catalogUIDs(ctx, bdName, installNS)

		By("the tag moves to the next catalog version, which drops 1.0.0: the held install runs it, so it is kept, marked retracted")
		pushCatalogImage(nextCatalog(ctx, dir), "catalog/held-retracted:latest")
		revision = published(ctx, cat, revision)
		kept := &datav1alpha1.Package{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref + ".1.0.0"}, kept)).To(Succeed(), "what a held install runs is kept")
		Expect(kept.Annotations).To(HaveKeyWithValue(catalog.AnnotationRetracted, revision))

		By("kctrl package installed update -i prom --values-file (watchNamespaces: its own namespace): the values land on 1.0.0, which runs; the move stays held")
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlInstalledUpdateValues(ctx, env.ControlPlane.Config, ns, install, []byte(values+"watchNamespaces: ["+installNS+"]\n"))
		})).To(Succeed())
		deployment := &appsv1.Deployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: installNS, Name: "prometheus-operator"}, deployment)).To(Succeed())
		Expect(deployment.Spec.Template.Annotations).To(HaveKeyWithValue("olm.targetNamespaces", installNS))
		oi := operatorInstall(ctx, ns, install)
		held := meta.FindStatusCondition(oi.Status.Conditions, catalogsv1alpha1.TypeHeld)
		Expect(held).NotTo(BeNil())
		Expect(held.ObservedGeneration).To(Equal(oi.Generation))
		Expect(held.Message).To(ContainSubstring("1.0.0 runs, with this generation's other values"))
		Expect(oi.Status.Installed).To(HaveField("Version", "1.0.0"))
		Eventually(upgradeNotice).WithContext(ctx).WithArguments(ns, install).Should(HavePrefix("False " + catalogsv1alpha1.ReasonNotInChannel))
		Expect(catalogUIDs(ctx, bdName, installNS)).To(Equal(before), "nothing recreated")
	}, SpecTimeout(6*time.Minute))
})

// consoleSamples serves the console's ConsoleYAMLSample kind and grants it
// to the adapter's health role, for the spec's time.
func consoleSamples(ctx context.Context) {
	GinkgoHelper()
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
}
