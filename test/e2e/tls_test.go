package e2e_test

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

func contentSecrets(ctx context.Context, bd string) func() ([]string, error) {
	return func() ([]string, error) {
		list := &corev1.SecretList{}
		err := env.Client.List(ctx, list, client.InNamespace(harness.SystemNamespace), client.MatchingLabels{
			rukpakv1alpha2.LabelOwnerName: bd, adapter.LabelContent: "true",
		})
		var names []string
		for _, s := range list.Items {
			names = append(names, s.Name)
		}
		return names, err
	}
}

var _ = Describe("images behind their own TLS trust", func() {
	It("installs with certificateData and insecureSkipTLSVerify false, without touching kapp-controller's trust", func(ctx context.Context) {
		plainBD(ctx, "tls-ca", tlsImages["valid"], func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Spec.Source.Image.CertificateData = string(env.TLSRegistry.CA.PEM)
			bd.Spec.Source.Image.InsecureSkipTLSVerify = false
		})
		Eventually(getBD(ctx, "tls-ca")).Should(And(
			haveCondition("Installed", "True", "InstallationSucceeded", ""),
			haveCondition("Unpacked", "True", "UnpackSuccessful", ""),
			HaveField("Status.ResolvedSource.Image.Ref", Equal(strings.TrimSuffix(tlsImages["valid"], ":valid")+"@"+digests["tls/valid"])),
			HaveField("Status.ResolvedSource.Image.CertificateData", Not(BeEmpty())),
		))
		Expect(ownedCRDs(ctx, "tls-ca")()).To(HaveLen(8))
		Expect(contentSecrets(ctx, "tls-ca")()).To(HaveLen(1))

		By("upgrading to other content, the superseded Secret goes once the new one is deployed")
		old, err := contentSecrets(ctx, "tls-ca")()
		Expect(err).NotTo(HaveOccurred())
		Expect(harness.Edit(ctx, env.Client, mustBD(ctx, "tls-ca"), func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Spec.Source.Image.Ref = tlsImages["provides"]
		})).To(Succeed())
		Eventually(ownedCRDs(ctx, "tls-ca")).Should(ConsistOf("operatorgroups.operators.coreos.com"))
		Eventually(contentSecrets(ctx, "tls-ca")).Should(And(HaveLen(1), Not(ContainElement(old[0]))))
	})
})

func mustCA() *harness.TestCA {
	ca, err := harness.NewTestCA("an unrelated CA")
	Expect(err).NotTo(HaveOccurred())
	return ca
}
