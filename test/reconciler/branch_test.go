package reconciler_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
)

var _ = Describe("a tracked branch the adapter fetches", func() {
	It("reports a move to content that is no bundle once, keeps the deployed commit, and deploys the next good one", func(ctx context.Context) {
		const name = "branch-broken"
		valid := bdtest.Testdata("rukpak-bundles", "plain-v0", "valid", "manifests")
		repo, err := env.Git.NewRepo(name+"-"+bdtest.RandSuffix(), valid, "manifests")
		Expect(err).NotTo(HaveOccurred())
		good, err := repo.Head()
		Expect(err).NotTo(HaveOccurred())
		bdtest.GitBD(ctx, name, rukpakv1alpha2.GitSource{Repository: repo.URL, Ref: rukpakv1alpha2.GitRef{Branch: "main"}},
			func(bd *rukpakv1alpha2.BundleDeployment) { bd.Spec.Source.Git.Auth.InsecureSkipVerify = true })
		appFor(ctx, name, 1)
		appSucceeded(ctx, name, "")
		Eventually(bdtest.GetBD(ctx, name)).Should(And(
			bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""),
			HaveField("Status.ResolvedSource.Git.Ref.Commit", good),
		))
		deployed, err := bdtest.GetApp(ctx, name)
		Expect(err).NotTo(HaveOccurred())

		// The branch moves to a commit without manifests/.
		Expect(repo.Commit(GinkgoT().TempDir(), "manifests", "drop the manifests")).To(Succeed())
		Eventually(bdtest.GetBD(ctx, name)).WithTimeout(3*branchPeriod + 5*time.Second).Should(And(
			bdtest.HaveCondition("Installed", "False", "UpgradeFailed", "no manifests/ directory"),
			HaveField("Status.ResolvedSource.Git.Ref.Commit", good),
		))
		app, err := bdtest.GetApp(ctx, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(app.Spec).To(Equal(deployed.Spec), "the App keeps deploying the good commit")

		// The failure stays, once: no status write while nothing changes,
		// over several branch periods.
		written := bdtest.MustBD(ctx, name).ResourceVersion
		Consistently(func() string { return bdtest.MustBD(ctx, name).ResourceVersion }).
			WithTimeout(4 * branchPeriod).WithPolling(200 * time.Millisecond).Should(Equal(written))

		Expect(repo.Commit(bdtest.Testdata("rukpak-bundles", "plain-v0", "provides", "manifests"), "manifests", "a good bundle again")).To(Succeed())
		fixed, err := repo.Head()
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() string {
			app, _ := bdtest.GetApp(ctx, name)
			return app.Annotations[rukpakv1alpha2.AnnotationResolvedSource]
		}).WithTimeout(3 * branchPeriod).Should(ContainSubstring(fixed))
		appSucceeded(ctx, name, "")
		Eventually(bdtest.GetBD(ctx, name)).Should(And(
			bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""),
			HaveField("Status.ResolvedSource.Git.Ref.Commit", fixed),
		))
	})
})
