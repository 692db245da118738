package packaging_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/v1alpha1/deployments/templates"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var _ = Describe("the serve mode with rukpak's first API", func() {
	It("installs a v1alpha1 BundleDeployment through a PackageInstall, with its Bundle and activeBundle", func(ctx context.Context) {
		const name = "serve-v1alpha1"
		bd := &rukpakv1alpha1.BundleDeployment{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: rukpakv1alpha1.BundleDeploymentSpec{ProvisionerClassName: rukpakv1alpha1.ClassPlain, Template: rukpakv1alpha1.BundleTemplate{
				Spec: rukpakv1alpha1.BundleSpec{ProvisionerClassName: rukpakv1alpha1.ClassPlain, Source: rukpakv1alpha1.BundleSource{
					Type: rukpakv1alpha1.SourceTypeImage, Image: &rukpakv1alpha1.ImageSource{Ref: pushPlain("serve/v1alpha1:v1", "first api", "")}}},
			}},
		}
		Eventually(func() error { return env.Client.Create(ctx, bd.DeepCopy()) }).WithContext(ctx).WithTimeout(serveTimeout).Should(Succeed())
		DeferCleanup(deleteBD, name)
		generated := templates.Desired(bd).Name

		Eventually(func(g Gomega) {
			got := &rukpakv1alpha1.BundleDeployment{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, got)).To(Succeed())
			c := apimeta.FindStatusCondition(got.Status.Conditions, rukpakv1alpha1.TypeInstalled)
			g.Expect(c).NotTo(BeNil(), "%+v", got.Status)
			g.Expect(*c).To(And(HaveField("Status", metav1.ConditionTrue), HaveField("Reason", rukpakv1alpha1.ReasonInstallationSucceeded),
				HaveField("Message", HavePrefix("Instantiated bundle "+generated+" successfully"))))
			g.Expect(got.Status.ActiveBundle).To(Equal(generated))
		}).WithContext(ctx).WithTimeout(serveTimeout).Should(Succeed())
		expectServed(ctx, name)
		// Installed where rukpak v0.16 installed it: the system namespace.
		expectGreeting(ctx, harness.SystemNamespace, "first api", name)
		b := &rukpakv1alpha1.Bundle{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: generated}, b)).To(Succeed())
		Expect(b.Status.Phase).To(Equal(rukpakv1alpha1.PhaseUnpacked))
	})
})
