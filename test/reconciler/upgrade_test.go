package reconciler_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// setImage points a BundleDeployment at another image: a new generation.
func setImage(ctx context.Context, name, ref string) {
	bd := bdtest.MustBD(ctx, name)
	before := bd.DeepCopy()
	bd.Spec.Source.Image.Ref = ref
	Expect(env.Client.Patch(ctx, bd, client.MergeFrom(before))).To(Succeed())
}

func installedCondition(bd *rukpakv1alpha2.BundleDeployment) metav1.Condition {
	c := apimeta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled)
	if c == nil {
		return metav1.Condition{}
	}
	return *c
}

var _ = Describe("installs and upgrades", func() {
	It("installs, pinning the digest kapp-controller fetched", func(ctx context.Context) {
		bdtest.PlainBD(ctx, "install", images["plain-v0/valid"])
		app := appFor(ctx, "install", 1)
		Expect(app.Spec.Fetch[0].Image.URL).To(Equal(images["plain-v0/valid"]))
		Expect(app.OwnerReferences).To(HaveLen(1))
		appSucceeded(ctx, "install", pinned["plain-v0/valid"])
		Eventually(bdtest.GetBD(ctx, "install")).Should(And(
			bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", "Instantiated bundle install"),
			bdtest.HaveCondition("Healthy", "True", "Healthy", ""),
			HaveField("Status.ObservedGeneration", BeEquivalentTo(1)),
			HaveField("Status.ResolvedSource.Image.Ref", pinned["plain-v0/valid"]),
		))
	})

	// Clients act on Installed=True at the current generation (kubectl wait,
	// GitOps health checks): it must never appear before kapp-controller
	// deployed that generation.
	It("says what is installed until the App deployed the new generation, and reports the new one's first failure at once", func(ctx context.Context) {
		const name = "upgrade"
		bdtest.PlainBD(ctx, name, images["plain-v0/valid"])
		appFor(ctx, name, 1)
		appSucceeded(ctx, name, pinned["plain-v0/valid"])
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))
		history := watchBD(ctx, name)

		setImage(ctx, name, images["plain-v0/subdir"])
		appFor(ctx, name, 2)
		appDeploying(ctx, name, pinned["plain-v0/subdir"])
		// Past the progress delay: the new generation's progress is shown,
		// the installed one stays said, with its source.
		Eventually(bdtest.GetBD(ctx, name)).WithTimeout(10 * time.Second).Should(
			bdtest.HaveCondition("Unpacked", "True", "UnpackSuccessful", ""))
		bd := bdtest.MustBD(ctx, name)
		Expect(installedCondition(bd)).To(And(HaveField("Status", metav1.ConditionTrue), HaveField("ObservedGeneration", BeEquivalentTo(1))))
		Expect(bd.Status.ObservedGeneration).To(BeEquivalentTo(1))
		Expect(bd.Status.ResolvedSource.Image.Ref).To(Equal(pinned["plain-v0/valid"]))

		failedAt := time.Now()
		appDeployFailed(ctx, name, "kapp: Error: waiting on reconcile deployment/web: timed out", 1)
		Eventually(bdtest.GetBD(ctx, name)).WithTimeout(5 * time.Second).Should(And(
			bdtest.HaveCondition("Installed", "False", "UpgradeFailed", "timed out"),
			HaveField("Status.ResolvedSource.Image.Ref", pinned["plain-v0/valid"]),
		))
		GinkgoWriter.Printf("UpgradeFailed reported %v after the App failed\n", time.Since(failedAt))

		appDeploying(ctx, name, pinned["plain-v0/subdir"])
		appSucceeded(ctx, name, pinned["plain-v0/subdir"])
		Eventually(bdtest.GetBD(ctx, name)).Should(And(
			bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""),
			HaveField("Status.ObservedGeneration", BeEquivalentTo(2)),
			HaveField("Status.ResolvedSource.Image.Ref", pinned["plain-v0/subdir"]),
		))

		// Every version a watching client saw: Installed=True at generation 2
		// only after the App reported the new spec deployed, which is last.
		versions := history.seen()
		Expect(versions).NotTo(BeEmpty())
		for i, v := range versions[:len(versions)-1] {
			c := installedCondition(v)
			Expect(c.Status == metav1.ConditionTrue && c.ObservedGeneration == 2).To(BeFalse(),
				"version %d (resourceVersion %s) claims generation 2 installed before kapp-controller deployed it", i, v.ResourceVersion)
			if c.Status == metav1.ConditionTrue {
				Expect(v.Status.ResolvedSource).NotTo(BeNil(), "version %d: Installed=True without the source that is installed", i)
			}
		}
	})

	It("removes superseded content only once the App deployed what replaces it", func(ctx context.Context) {
		const name = "prune"
		ref, _, err := env.TLSRegistry.PushDir(bdtest.Testdata("rukpak-bundles", "plain-v0", "valid"), "prune/bundle:v1")
		Expect(err).NotTo(HaveOccurred())
		ref2, _, err := env.TLSRegistry.PushDir(bdtest.Testdata("rukpak-bundles", "plain-v0", "subdir"), "prune/bundle:v2")
		Expect(err).NotTo(HaveOccurred())
		bdtest.PlainBD(ctx, name, ref, func(bd *rukpakv1alpha2.BundleDeployment) { bd.Spec.Source.Image.InsecureSkipTLSVerify = true })
		appFor(ctx, name, 1)
		first := contentSecrets(ctx, name)
		Expect(first).NotTo(BeEmpty())
		appSucceeded(ctx, name, "")
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))

		setImage(ctx, name, ref2)
		app := appFor(ctx, name, 2)
		Expect(contentSecrets(ctx, name)).To(ContainElements(first), "the old content stays while the App may still read it")
		Expect(app.Spec.Fetch[0].Inline.PathsFrom).NotTo(ContainElement(HaveField("SecretRef.Name", first[0])))
		appSucceeded(ctx, name, "")
		Eventually(func() []string { return contentSecrets(ctx, name) }).ShouldNot(ContainElement(first[0]))
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))
	})
})

// contentSecrets names the content Secrets of a BundleDeployment.
func contentSecrets(ctx context.Context, bd string) []string {
	list := &corev1.SecretList{}
	Expect(env.Client.List(ctx, list, client.InNamespace(harness.SystemNamespace),
		client.MatchingLabels{rukpakv1alpha2.LabelOwnerName: bd, adapter.LabelContent: "true"})).To(Succeed())
	var names []string
	for _, s := range list.Items {
		names = append(names, s.Name)
	}
	return names
}
