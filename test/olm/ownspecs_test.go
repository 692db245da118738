package olm_test

import (
	"context"
	"strings"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// prometheusRef is where the test catalog says prometheus version v is.
func prometheusRef(v string) string {
	return "localhost/testdata/bundles/registry-v1/prometheus-operator:v" + v
}

// installed lists, by kind and name, the UIDs of what a BundleDeployment
// installed (the owner label), of the kinds the prometheus bundle holds.
func installed(ctx context.Context, bd string) map[string]string {
	out := map[string]string{}
	sel := client.MatchingLabels{rukpakv1alpha1.LabelOwnerName: bd}
	for kind, list := range map[string]client.ObjectList{
		"CustomResourceDefinition": &apiextensionsv1.CustomResourceDefinitionList{},
		"Deployment":               &appsv1.DeploymentList{},
		"ServiceAccount":           &corev1.ServiceAccountList{},
		"Service":                  &corev1.ServiceList{},
		"Namespace":                &corev1.NamespaceList{},
		"ClusterRole":              &rbacv1.ClusterRoleList{},
		"ClusterRoleBinding":       &rbacv1.ClusterRoleBindingList{},
	} {
		ExpectWithOffset(1, env.Client.List(ctx, list, sel)).To(Succeed())
		items, err := apimeta.ExtractList(list)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		for _, item := range items {
			o := item.(client.Object)
			out[kind+" "+o.GetNamespace()+"/"+o.GetName()] = string(o.GetUID())
		}
	}
	return out
}

func appsIn(ctx context.Context) ([]kappctrlv1alpha1.App, error) {
	list := &kappctrlv1alpha1.AppList{}
	err := env.Client.List(ctx, list, client.InNamespace(harness.SystemNamespace))
	return list.Items, err
}

var _ = Describe("OLM v1 on rukpak-kapp", Ordered, func() {
	const name = "prometheus"
	BeforeAll(func() {
		if baseline {
			Skip("rukpak-kapp's own specs: the baseline runs operator-controller's suite only")
		}
	})

	It("installs a ClusterExtension from the test catalog through a v1alpha1 BundleDeployment, its Bundle and one App, upgrades it along the catalog's edges in place, refuses a non-successor, and removes everything on delete",
		func(ctx context.Context) {
			catalog := newObject(catalogGVK, "olm-own", map[string]any{"source": map[string]any{"type": "image",
				"image": map[string]any{"ref": env.OLM.CatalogImage, "insecureSkipTLSVerify": true}}})
			Expect(env.Client.Create(ctx, catalog)).To(Succeed())
			DeferCleanup(func(ctx context.Context) {
				Expect(client.IgnoreNotFound(env.Client.Delete(ctx, catalog))).To(Succeed())
				Eventually(func() bool {
					return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(catalog), catalog))
				}).
					WithContext(ctx).Should(BeTrue(), "the catalog goes before operator-controller's suite, which makes its own")
			})
			Eventually(getOLM(ctx, catalogGVK, "olm-own")).Should(haveOLMCondition("Unpacked", "True", "UnpackSuccessful", ""))

			By("a ClusterExtension at version 1.0.0")
			ce := newObject(clusterExtensionGVK, name, map[string]any{"packageName": "prometheus", "version": "1.0.0"})
			Expect(env.Client.Create(ctx, ce)).To(Succeed())
			DeferCleanup(func(ctx context.Context) {
				// Gone before operator-controller's suite, whose resolution a
				// second ClusterExtension of the package would fail.
				Expect(client.IgnoreNotFound(env.Client.Delete(ctx, ce))).To(Succeed())
				Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(ce), ce)) }).WithContext(ctx).Should(BeTrue())
			})
			Eventually(getOLM(ctx, clusterExtensionGVK, name)).Should(And(
				haveOLMCondition("Resolved", "True", "Success", "resolved to \""+prometheusRef("1.0.0")+"\""),
				haveOLMCondition("Installed", "True", "Success", "installed from \""+prometheusRef("1.0.0")+"\""),
				haveStatusField("installedBundleResource", prometheusRef("1.0.0"))))
			live, err := getOLM(ctx, clusterExtensionGVK, name)()
			Expect(err).NotTo(HaveOccurred())

			By("becomes a v1alpha1 BundleDeployment owned by the ClusterExtension, its registry+v1 Bundle, and one App")
			bd, err := bdtest.GetV1alpha1BD(ctx, name)()
			Expect(err).NotTo(HaveOccurred())
			Expect(bd.Spec.ProvisionerClassName).To(Equal(rukpakv1alpha1.ClassPlain))
			Expect(bd.Spec.Template.Spec.ProvisionerClassName).To(Equal(rukpakv1alpha1.ClassRegistry))
			Expect(bd.Spec.Template.Spec.Source.Image.Ref).To(Equal(prometheusRef("1.0.0")))
			Expect(bd.OwnerReferences).To(ConsistOf(And(HaveField("Kind", "ClusterExtension"), HaveField("UID", BeEquivalentTo(live.UID)), HaveField("Controller", HaveValue(BeTrue())))))
			Expect(bd).To(And(
				bdtest.HaveV1alpha1Condition("HasValidBundle", "True", "UnpackSuccessful", ""),
				bdtest.HaveV1alpha1Condition("Installed", "True", "InstallationSucceeded", ""),
				bdtest.HaveV1alpha1Condition("Healthy", "True", "Healthy", "")))
			first := bd.Status.ActiveBundle
			Expect(bdtest.BundlesOf(ctx, name)()).To(ConsistOf(And(HaveField("Name", first),
				bdtest.HaveBundlePhase(rukpakv1alpha1.PhaseUnpacked, "True", "UnpackSuccessful", "Successfully unpacked the image Bundle"),
				HaveField("Status.ResolvedSource.Image.Ref", HavePrefix("localhost/testdata/bundles/registry-v1/prometheus-operator@sha256:")))))
			apps, err := appsIn(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(apps).To(ConsistOf(HaveField("Name", name)))
			before := installed(ctx, name)
			Expect(before).To(HaveKey("Deployment prometheus-system/prometheus-operator"))
			Expect(before).To(HaveKey("Namespace /prometheus-system"), "rukpak v0.16 installed registry+v1 into the bundle's own namespace, made with it")
			crds := 0
			for k := range before {
				if strings.HasPrefix(k, "CustomResourceDefinition ") {
					crds++
				}
			}
			Expect(crds).To(Equal(10))
			deployment := &appsv1.Deployment{}
			Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "prometheus-system", Name: "prometheus-operator"}, deployment)).To(Succeed())

			By("an upgrade to 1.2.0, which the channel reaches by replaces: the same objects, none recreated, nothing rolled")
			setSpec(ctx, clusterExtensionGVK, name, "version", "1.2.0")
			Eventually(getOLM(ctx, clusterExtensionGVK, name)).Should(And(
				haveOLMCondition("Installed", "True", "Success", "installed from \""+prometheusRef("1.2.0")+"\""),
				haveStatusField("installedBundleResource", prometheusRef("1.2.0"))))
			// operator-controller v0.9.0 says installed once the
			// BundleDeployment's Installed is True, whatever generation that
			// condition describes (it was so on rukpak v0.16.0 too): the new
			// template's Bundle is active once kapp-controller deployed it.
			Eventually(bdtest.GetV1alpha1BD(ctx, name)).Should(And(
				HaveField("Spec.Template.Spec.Source.Image.Ref", prometheusRef("1.2.0")),
				WithTransform(func(bd *rukpakv1alpha1.BundleDeployment) string { return bd.Status.ActiveBundle }, Not(Equal(first))),
				bdtest.HaveV1alpha1Condition("Installed", "True", "InstallationSucceeded", "")))
			bd, err = bdtest.GetV1alpha1BD(ctx, name)()
			Expect(err).NotTo(HaveOccurred())
			Eventually(bdtest.BundlesOf(ctx, name)).Should(ConsistOf(HaveField("Name", bd.Status.ActiveBundle)), "the old Bundle goes once the new one is installed")
			Expect(installed(ctx, name)).To(Equal(before), "an object was recreated, added or removed")
			after := &appsv1.Deployment{}
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(deployment), after)).To(Succeed())
			Expect(after.Generation).To(Equal(deployment.Generation), "the Deployment rolled")
			Expect(appsIn(ctx)).To(ConsistOf(HaveField("Name", name)))

			By("2.0.0, which no edge reaches from 1.2.0: refused by operator-controller, nothing changes")
			setSpec(ctx, clusterExtensionGVK, name, "version", "2.0.0")
			Eventually(getOLM(ctx, clusterExtensionGVK, name)).Should(haveOLMCondition("Resolved", "False", "ResolutionFailed", "constraints not satisfiable"))
			Consistently(func() (string, error) {
				bd, err := bdtest.GetV1alpha1BD(ctx, name)()
				if err != nil {
					return "", err
				}
				return bd.Spec.Template.Spec.Source.Image.Ref, nil
			}).WithTimeout(5 * time.Second).Should(Equal(prometheusRef("1.2.0")))
			Expect(installed(ctx, name)).To(Equal(before))

			By("deleting the ClusterExtension removes everything it installed")
			Expect(env.Client.Delete(ctx, ce)).To(Succeed())
			Eventually(func() bool {
				_, err := bdtest.GetV1alpha1BD(ctx, name)()
				return apierrors.IsNotFound(err)
			}).Should(BeTrue(), "the BundleDeployment goes with its owner")
			Eventually(appsIn).WithContext(ctx).Should(BeEmpty())
			Eventually(func() map[string]string { return installed(ctx, name) }).Should(BeEmpty())
			Eventually(bdtest.BundlesOf(ctx, name)).Should(BeEmpty())
		}, NodeTimeout(6*time.Minute))
})
