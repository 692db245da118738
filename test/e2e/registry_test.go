package e2e_test

import (
	"context"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var _ = Describe("registry+v1 bundles", func() {
	It("converts and installs rukpak's registry/valid (prometheus operator 0.47.0); its Deployment becomes Available", func(ctx context.Context) {
		ref, _, err := env.Registry.PushDir(filepath.Join(bundlesDir, "registry", "valid"), "bundles/registry-valid:v1")
		Expect(err).NotTo(HaveOccurred())
		registryBD(ctx, "registry-valid", ref, "prometheus-system")
		Eventually(getBD(ctx, "registry-valid")).Should(And(
			haveCondition("Installed", "True", "InstallationSucceeded", ""),
			haveCondition("Healthy", "True", "Healthy", ""),
			HaveField("Status.ResolvedSource.Image.Ref", ContainSubstring("@sha256:")),
		))
		Expect(ownedCRDs(ctx, "registry-valid")()).To(HaveLen(8))
		dep := onlyDeployment(ctx, "prometheus-system")
		Expect(dep.Spec.Template.Annotations).To(HaveKeyWithValue("olm.targetNamespaces", ""))
		Expect(dep.Spec.Template.Annotations).To(HaveKeyWithValue("olm.operatorNamespace", "prometheus-system"))
		app, err := getApp(ctx, "registry-valid")
		Expect(err).NotTo(HaveOccurred())
		Expect(app.Spec.Fetch[0].Inline).NotTo(BeNil(), "converted objects reach kapp-controller as inline content")
	})

	It("names the install modes of registry/invalid (MultiNamespace only), and installs it once watchNamespaces names two namespaces", func(ctx context.Context) {
		ref, _, err := env.Registry.PushDir(filepath.Join(bundlesDir, "registry", "invalid"), "bundles/registry-invalid:v1")
		Expect(err).NotTo(HaveOccurred())
		registryBD(ctx, "registry-invalid", ref, "update-service-system")
		Eventually(getBD(ctx, "registry-invalid")).Should(haveCondition("Installed", "False", "InstallFailed",
			"convert registry+v1 bundle to plain+v0 bundle: bundle update-service-operator.v5.0.0: supported install modes [MultiNamespace] need the namespaces to watch"))

		Expect(harness.Edit(ctx, env.Client, mustBD(ctx, "registry-invalid"), func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Spec.Config = &apiextensionsv1.JSON{Raw: []byte(`{"watchNamespaces":["team-a","team-b"]}`)}
		})).To(Succeed())
		Eventually(getBD(ctx, "registry-invalid")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
	})
})

// onlyDeployment returns the only Deployment in ns.
func onlyDeployment(ctx context.Context, ns string) *appsv1.Deployment {
	list := &appsv1.DeploymentList{}
	ExpectWithOffset(1, env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	ExpectWithOffset(1, list.Items).To(HaveLen(1))
	return &list.Items[0]
}
