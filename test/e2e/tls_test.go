package e2e_test

import (
	"context"
	"strings"
	"time"

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
		bd, err := getBD(ctx, "tls-ca")()
		Expect(err).NotTo(HaveOccurred())
		bd.Spec.Source.Image.Ref = tlsImages["provides"]
		Expect(env.Client.Update(ctx, bd)).To(Succeed())
		Eventually(ownedCRDs(ctx, "tls-ca")).Should(ConsistOf("operatorgroups.operators.coreos.com"))
		Eventually(contentSecrets(ctx, "tls-ca")).Should(And(HaveLen(1), Not(ContainElement(old[0]))))
	})

	It("refuses certificateData that holds no certificate", func(ctx context.Context) {
		plainBD(ctx, "tls-no-ca", tlsImages["valid"], func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Spec.Source.Image.CertificateData = "-----BEGIN CERTIFICATE-----\nMIIBhTCCASugAwIBAgIQIRi6zePL6mKjOipn+dNuaTAKBggqhkjOPQQDAjASMRAw\n-----END CERTIFICATE-----\n"
		})
		Eventually(getBD(ctx, "tls-no-ca")).Should(haveCondition("Unpacked", "False", "UnpackFailed", "certificate"))
	})

	It("fails against a registry it does not trust with a certificate message", func(ctx context.Context) {
		plainBD(ctx, "tls-untrusted", tlsImages["valid"], func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Spec.Source.Image.CertificateData = string(mustCA().PEM)
		})
		Eventually(getBD(ctx, "tls-untrusted")).Should(haveCondition("Unpacked", "False", "UnpackFailed", "certificate signed by unknown authority"))
	})

	It("recreates a content Secret deleted by hand", func(ctx context.Context) {
		plainBD(ctx, "tls-heal", tlsImages["hello"], func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Spec.Source.Image.CertificateData = string(env.TLSRegistry.CA.PEM)
		})
		Eventually(getBD(ctx, "tls-heal")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		names, err := contentSecrets(ctx, "tls-heal")()
		Expect(err).NotTo(HaveOccurred())
		Expect(names).To(HaveLen(1))
		secret := &corev1.Secret{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: names[0]}, secret)).To(Succeed())
		uid := secret.UID
		Expect(env.Client.Delete(ctx, secret)).To(Succeed())

		Eventually(func() (bool, error) {
			s := &corev1.Secret{}
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: names[0]}, s)
			return err == nil && s.UID != uid, client.IgnoreNotFound(err)
		}).WithTimeout(30 * time.Second).Should(BeTrue())
		Consistently(getBD(ctx, "tls-heal")).WithTimeout(5 * time.Second).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
	})

	It("installs with insecureSkipTLSVerify", func(ctx context.Context) {
		plainBD(ctx, "tls-skip-verify", tlsImages["valid"], func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Spec.Source.Image.InsecureSkipTLSVerify = true
		})
		Eventually(getBD(ctx, "tls-skip-verify")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
	})
})

func mustCA() *harness.TestCA {
	ca, err := harness.NewTestCA("an unrelated CA")
	Expect(err).NotTo(HaveOccurred())
	return ca
}
