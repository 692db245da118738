package e2e_test

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var olmCRDs = []string{
	"catalogsources.operators.coreos.com", "clusterserviceversions.operators.coreos.com",
	"installplans.operators.coreos.com", "olmconfigs.operators.coreos.com",
	"operatorconditions.operators.coreos.com", "operatorgroups.operators.coreos.com",
	"operators.operators.coreos.com", "subscriptions.operators.coreos.com",
}

var _ = Describe("plain bundles from an image", func() {
	It("installs plain-v0/valid, pins its digest and labels every object", func(ctx context.Context) {
		plainBD(ctx, "plain-valid", images["plain-v0/valid"])
		Eventually(getBD(ctx, "plain-valid")).Should(haveCondition("Installed", "True", "InstallationSucceeded", "Instantiated bundle plain-valid"))

		bd, err := getBD(ctx, "plain-valid")()
		Expect(err).NotTo(HaveOccurred())
		Expect(bd).To(haveCondition("Unpacked", "True", "UnpackSuccessful", ""))
		Expect(bd).To(haveCondition("Healthy", "True", "Healthy", ""))
		Expect(bd.Status.ObservedGeneration).To(Equal(bd.Generation))
		Expect(bd.Status.ResolvedSource).NotTo(BeNil())
		Expect(bd.Status.ResolvedSource.Image.Ref).To(Equal(strings.TrimSuffix(images["plain-v0/valid"], ":valid") + "@" + digests["plain-v0/valid"]))

		Expect(ownedCRDs(ctx, "plain-valid")()).To(ConsistOf(olmCRDs))

		app, err := getApp(ctx, "plain-valid")
		Expect(err).NotTo(HaveOccurred())
		Expect(app.Labels).To(HaveKeyWithValue(rukpakv1alpha2.LabelOwnerName, "plain-valid"))
		Expect(app.OwnerReferences).To(ContainElement(HaveField("UID", bd.UID)))
		Expect(app.Spec.DefaultNamespace).To(Equal("default"))
	})

	It("installs a BundleDeployment of an alias class (--classes NAME=core-rukpak-io-plain) and keeps its class", func(ctx context.Context) {
		ref := dirBundle("alias-class", map[string]string{"manifests/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: alias-class\n  namespace: default\n"})
		plainBD(ctx, "alias-class", ref, func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Spec.ProvisionerClassName = harness.AliasPlainClass
		})
		Eventually(getBD(ctx, "alias-class")).Should(haveCondition("Installed", "True", "InstallationSucceeded", "Instantiated bundle alias-class"))
		Expect(env.Client.Get(ctx, objKey("default", "alias-class"), &corev1.ConfigMap{})).To(Succeed())
		bd := mustBD(ctx, "alias-class")
		Expect(bd.Spec.ProvisionerClassName).To(Equal(harness.AliasPlainClass), "the alias was written back as the built-in class")
		Expect(bd.Finalizers).To(ContainElement("core.rukpak.io/uninstall"))
	})

	It("reports a tag that does not exist as an unpack failure naming the image", func(ctx context.Context) {
		ref := strings.Replace(images["plain-v0/valid"], ":valid", ":does-not-exist", 1)
		plainBD(ctx, "plain-missing-tag", ref)
		Eventually(getBD(ctx, "plain-missing-tag")).Should(haveCondition("Unpacked", "False", "UnpackFailed", ref))
		bd, _ := getBD(ctx, "plain-missing-tag")()
		Expect(bd).NotTo(haveCondition("Installed", "True", "InstallationSucceeded", ""))
	})

	It("installs a dependent bundle once its provider is installed, without touching it", func(ctx context.Context) {
		plainBD(ctx, "plain-dependent", images["plain-v0/dependent"])
		Eventually(getBD(ctx, "plain-dependent")).Should(haveCondition("Installed", "False", "ErrorGettingReleaseState", "OperatorGroup"))
		before, err := getBD(ctx, "plain-dependent")()
		Expect(err).NotTo(HaveOccurred())

		plainBD(ctx, "plain-provides", images["plain-v0/provides"])
		Eventually(getBD(ctx, "plain-provides")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		Eventually(getBD(ctx, "plain-dependent")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		after, err := getBD(ctx, "plain-dependent")()
		Expect(err).NotTo(HaveOccurred())
		Expect(after.Generation).To(Equal(before.Generation))
	})

	It("pulls a private image with a pull secret from the system namespace", func(ctx context.Context) {
		plainBD(ctx, "plain-private", privateValid, func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Spec.Source.Image.ImagePullSecretName = pullSecretRef
		})
		Eventually(getBD(ctx, "plain-private")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
	})

	It("upgrades in place when the image changes, deleting what the new bundle dropped", func(ctx context.Context) {
		plainBD(ctx, "plain-upgrade", images["hello"])
		Eventually(getBD(ctx, "plain-upgrade")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		Expect(ownedCRDs(ctx, "plain-upgrade")()).To(ConsistOf("greetings.example.rukpak-kapp.dev"))

		bd, err := getBD(ctx, "plain-upgrade")()
		Expect(err).NotTo(HaveOccurred())
		bd.Spec.Source.Image.Ref = images["plain-v0/provides"]
		Expect(env.Client.Update(ctx, bd)).To(Succeed())

		Eventually(getBD(ctx, "plain-upgrade")).Should(And(
			haveCondition("Installed", "True", "InstallationSucceeded", ""),
			HaveField("Status.ResolvedSource.Image.Ref", HaveSuffix(digests["plain-v0/provides"])),
		))
		Eventually(ownedCRDs(ctx, "plain-upgrade")).Should(ConsistOf("operatorgroups.operators.coreos.com"))
	})

	It("deletes the App and everything installed when the BundleDeployment is deleted", func(ctx context.Context) {
		plainBD(ctx, "plain-delete", images["hello"])
		Eventually(getBD(ctx, "plain-delete")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		Expect(ownedCRDs(ctx, "plain-delete")()).To(HaveLen(1))

		deleteAndWait(ctx, "plain-delete")
		_, err := getApp(ctx, "plain-delete")
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "want the App gone, got %v", err)
		Expect(ownedCRDs(ctx, "plain-delete")()).To(BeEmpty())
	})
})
