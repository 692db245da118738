package reconciler_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/v1alpha1/deployments/templates"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// bundleOf is the name of the Bundle bd's template generates now.
func bundleOf(ctx context.Context, name string) string {
	bd, err := bdtest.GetV1alpha1BD(ctx, name)()
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return templates.Desired(bd).Name
}

// templateHash is the hash label of the Bundle bd's template generates now.
func templateHash(ctx context.Context, name string) string {
	bd, err := bdtest.GetV1alpha1BD(ctx, name)()
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return templates.TemplateHash(bd.Spec.Template)
}

func bundleNames(bs []rukpakv1alpha1.Bundle) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Name)
	}
	return out
}

// rukpak's first API, through the adapter's own conversion webhook on the
// real API server: the suite writes the Apps' status as kapp-controller
// would.
var _ = Describe("a v1alpha1 BundleDeployment", func() {
	It("generates its template's Bundle, reports it installed with activeBundle once the App deployed, and replaces it on a template change only afterwards", func(ctx context.Context) {
		const name = "v1alpha1-plain"
		bdtest.V1alpha1BD(ctx, name, rukpakv1alpha1.ClassPlain, bdtest.V1alpha1Image(images["plain-v0/valid"]))

		By("storing it as v1alpha2 without an install namespace, installed into the system namespace as rukpak v0.16 did")
		stored := bdtest.MustBD(ctx, name)
		Expect(rukpakv1alpha1.IsV1alpha1(stored)).To(BeTrue())
		app := appFor(ctx, name, 1)
		Expect(app.Spec.Template[0].Ytt).NotTo(BeNil())
		Expect(app.Spec.Cluster).To(BeNil())
		Expect(app.Spec.DefaultNamespace).To(Equal(harness.SystemNamespace))

		first := bundleOf(ctx, name)
		Eventually(bdtest.BundlesOf(ctx, name)).Should(ConsistOf(And(
			HaveField("Name", first),
			HaveField("Labels", HaveKeyWithValue(rukpakv1alpha1.LabelBundleTemplateHash, templateHash(ctx, name))),
			HaveField("OwnerReferences", ConsistOf(And(HaveField("Kind", "BundleDeployment"), HaveField("UID", stored.UID), HaveField("APIVersion", "core.rukpak.io/v1alpha1")))),
			bdtest.HaveBundlePhase(rukpakv1alpha1.PhasePending, "False", "UnpackPending", ""),
		)), "the Bundle is made and says Pending at once")

		By("reporting HasValidBundle, Installed, Healthy and activeBundle once kapp-controller deployed it")
		appSucceeded(ctx, name, pinned["plain-v0/valid"])
		Eventually(bdtest.GetV1alpha1BD(ctx, name)).Should(And(
			bdtest.HaveV1alpha1Condition("HasValidBundle", "True", "UnpackSuccessful", "Successfully unpacked the "+first+" Bundle"),
			bdtest.HaveV1alpha1Condition("Installed", "True", "InstallationSucceeded", "Instantiated bundle "+first+" successfully"),
			bdtest.HaveV1alpha1Condition("Healthy", "True", "Healthy", ""),
			bdtest.HaveActiveBundle(first),
		))
		Eventually(bdtest.BundlesOf(ctx, name)).Should(ConsistOf(And(
			bdtest.HaveBundlePhase(rukpakv1alpha1.PhaseUnpacked, "True", "UnpackSuccessful", "Successfully unpacked the image Bundle"),
			HaveField("Status.ResolvedSource.Image.Ref", pinned["plain-v0/valid"]),
		)))
		Expect(bdtest.MustBD(ctx, name).Status.Conditions).NotTo(ContainElement(HaveField("Type", "Unpacked")), "v1alpha1 has no Unpacked condition on a BundleDeployment")

		By("a new template: a second Bundle, the first kept and still active until the App deploys the new one")
		bdtest.UpdateV1alpha1BD(ctx, name, func(bd *rukpakv1alpha1.BundleDeployment) {
			bd.Spec.Template.Labels = map[string]string{"app": "v2"}
			bd.Spec.Template.Spec.Source.Image.Ref = pinned["plain-v0/valid"]
		})
		second := bundleOf(ctx, name)
		Expect(second).NotTo(Equal(first))
		appFor(ctx, name, 2)
		Eventually(bdtest.GetV1alpha1BD(ctx, name)).Should(And(
			bdtest.HaveV1alpha1Condition("HasValidBundle", "True", "UnpackPending", "Waiting for the "+second+" Bundle to be unpacked"),
			bdtest.HaveActiveBundle(first),
			HaveField("Status.Conditions", ContainElement(And(HaveField("Type", "Installed"), HaveField("Status", metav1.ConditionTrue),
				HaveField("Message", "Instantiated bundle "+first+" successfully"), HaveField("ObservedGeneration", int64(1))))),
		))
		Eventually(bdtest.BundlesOf(ctx, name)).Should(HaveLen(2))
		appSucceeded(ctx, name, pinned["plain-v0/valid"])
		Eventually(bdtest.GetV1alpha1BD(ctx, name)).Should(And(
			bdtest.HaveV1alpha1Condition("Installed", "True", "InstallationSucceeded", "Instantiated bundle "+second+" successfully"),
			bdtest.HaveActiveBundle(second),
		))
		Eventually(bdtest.BundlesOf(ctx, name)).Should(WithTransform(bundleNames, ConsistOf(second)), "the old Bundle goes once the new one is installed")

		By("an upload source: refused on the Bundle with what to use instead, what is installed stays")
		bdtest.UpdateV1alpha1BD(ctx, name, func(bd *rukpakv1alpha1.BundleDeployment) {
			bd.Spec.Template.Spec.Source = rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeUpload, Upload: &rukpakv1alpha1.UploadSource{}}
		})
		third := bundleOf(ctx, name)
		Eventually(bdtest.GetV1alpha1BD(ctx, name)).Should(And(
			bdtest.HaveV1alpha1Condition("HasValidBundle", "False", "UnpackFailed", "Failed to unpack the "+third+` Bundle: source type "upload" is not served by rukpak-kapp`),
			bdtest.HaveActiveBundle(second),
		))
		Eventually(bdtest.BundlesOf(ctx, name)).Should(ContainElement(And(HaveField("Name", third),
			bdtest.HaveBundlePhase(rukpakv1alpha1.PhaseFailing, "False", "UnpackFailed", "Serve the bundle from an image"))))
		Expect(bdtest.BundlesOf(ctx, name)()).To(WithTransform(bundleNames, ConsistOf(second, third)))
		app, err := bdtest.GetApp(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(app.Annotations).To(HaveKeyWithValue(rukpakv1alpha2.AnnotationBundleGeneration, "2"), "the App is not touched")
	})

	It("installs registry+v1 through the plain class and a registry template into the bundle's namespace, and refuses a bundle without AllNamespaces as rukpak v0.16 did", func(ctx context.Context) {
		valid, _, err := env.Registry.PushDir(bdtest.Testdata("rukpak-bundles", "registry", "valid"), "v1alpha1/registry:valid")
		Expect(err).NotTo(HaveOccurred())
		invalid, _, err := env.Registry.PushDir(bdtest.Testdata("rukpak-bundles", "registry", "invalid"), "v1alpha1/registry:invalid")
		Expect(err).NotTo(HaveOccurred())
		bdtest.V1alpha1BD(ctx, "v1alpha1-registry", rukpakv1alpha1.ClassRegistry, bdtest.V1alpha1Image(valid))
		bdtest.V1alpha1BD(ctx, "v1alpha1-registry-invalid", rukpakv1alpha1.ClassRegistry, bdtest.V1alpha1Image(invalid))

		Expect(bdtest.MustBD(ctx, "v1alpha1-registry").Spec.ProvisionerClassName).To(Equal(rukpakv1alpha2.ClassRegistry))
		appFor(ctx, "v1alpha1-registry", 1)
		Eventually(func() error {
			return contentHolds(ctx, "v1alpha1-registry", "kind: Namespace", "name: prometheus-system", "namespace: prometheus-system")
		}).WithContext(ctx).Should(Succeed())
		appSucceeded(ctx, "v1alpha1-registry", "")
		Eventually(bdtest.GetV1alpha1BD(ctx, "v1alpha1-registry")).Should(And(
			bdtest.HaveV1alpha1Condition("Installed", "True", "InstallationSucceeded", "Instantiated bundle "+bundleOf(ctx, "v1alpha1-registry")+" successfully"),
			bdtest.HaveActiveBundle(bundleOf(ctx, "v1alpha1-registry")),
		))

		broken := bundleOf(ctx, "v1alpha1-registry-invalid")
		Eventually(bdtest.GetV1alpha1BD(ctx, "v1alpha1-registry-invalid")).Should(
			bdtest.HaveV1alpha1Condition("HasValidBundle", "False", "UnpackFailed", "Failed to unpack the "+broken+
				" Bundle: invalid bundle: convert registry+v1 bundle to plain+v0 bundle: AllNamespace install mode must be enabled"))
		Eventually(bdtest.BundlesOf(ctx, "v1alpha1-registry-invalid")).Should(ConsistOf(
			bdtest.HaveBundlePhase(rukpakv1alpha1.PhaseFailing, "False", "UnpackFailed", "AllNamespace install mode must be enabled")))
		Expect(bdtest.MustBD(ctx, "v1alpha1-registry-invalid").Status.Conditions).NotTo(ContainElement(HaveField("Type", "Installed")),
			"rukpak v0.16 stopped before installing")
		_, err = bdtest.GetApp(ctx, "v1alpha1-registry-invalid")
		Expect(err).To(HaveOccurred(), "no App for a bundle that cannot be converted")
	})

	It("makes no fifth Bundle, and makes the template's once one of the four is deleted", func(ctx context.Context) {
		const name = "v1alpha1-limit"
		bdtest.V1alpha1BD(ctx, name, rukpakv1alpha1.ClassPlain, bdtest.V1alpha1Image(images["plain-v0/valid"]))
		for i := 1; i < rukpakv1alpha1.MaxGeneratedBundles; i++ {
			Eventually(bdtest.BundlesOf(ctx, name)).Should(HaveLen(i))
			bdtest.UpdateV1alpha1BD(ctx, name, func(bd *rukpakv1alpha1.BundleDeployment) {
				bd.Spec.Template.Labels = map[string]string{"try": strings.Repeat("x", i)}
			})
		}
		Eventually(bdtest.BundlesOf(ctx, name)).Should(HaveLen(rukpakv1alpha1.MaxGeneratedBundles))
		bdtest.UpdateV1alpha1BD(ctx, name, func(bd *rukpakv1alpha1.BundleDeployment) { bd.Spec.Template.Labels = map[string]string{"try": "five"} })
		Eventually(bdtest.GetV1alpha1BD(ctx, name)).Should(bdtest.HaveV1alpha1Condition("HasValidBundle", "Unknown", "ReconcileFailed", templates.ErrMaxGenerated))
		Consistently(bdtest.BundlesOf(ctx, name)).WithTimeout(time.Second).Should(HaveLen(rukpakv1alpha1.MaxGeneratedBundles))

		listed, err := bdtest.BundlesOf(ctx, name)()
		Expect(err).NotTo(HaveOccurred())
		Expect(env.Client.Delete(ctx, &listed[0])).To(Succeed())
		Eventually(bdtest.BundlesOf(ctx, name)).Should(ContainElement(HaveField("Name", bundleOf(ctx, name))), "the watch on Bundles unblocks it")
		Eventually(bdtest.GetV1alpha1BD(ctx, name)).Should(bdtest.HaveV1alpha1Condition("HasValidBundle", "True", "UnpackPending", bundleOf(ctx, name)))
	})
})

// contentHolds says every text is in one of the BundleDeployment's
// content Secrets.
func contentHolds(ctx context.Context, bd string, texts ...string) error {
	list := &corev1.SecretList{}
	if err := env.Client.List(ctx, list, client.InNamespace(harness.SystemNamespace),
		client.MatchingLabels{rukpakv1alpha2.LabelOwnerName: bd, adapter.LabelContent: "true"}); err != nil {
		return err
	}
	var all strings.Builder
	for _, s := range list.Items {
		for _, data := range s.Data {
			all.Write(data)
			all.WriteString("\n")
		}
	}
	for _, t := range texts {
		if !strings.Contains(all.String(), t) {
			return fmt.Errorf("no content Secret of %s holds %q", bd, t)
		}
	}
	return nil
}
