package e2e_test

import (
	"context"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var _ = Describe("plain bundles from git", func() {
	var (
		repo   *harness.Repo
		commit string
	)
	BeforeEach(func() {
		var err error
		repo, err = env.Git.NewRepo("combo-"+randSuffix(), filepath.Join(helloBundle(), "manifests"), "manifests")
		Expect(err).NotTo(HaveOccurred())
		Expect(repo.Tag("v0.0.1")).To(Succeed())
		commit, err = repo.Head()
		Expect(err).NotTo(HaveOccurred())
	})

	DescribeTable("installs by ref and pins the commit",
		func(ctx context.Context, name string, ref func() rukpakv1alpha2.GitRef) {
			gitBD(ctx, name, rukpakv1alpha2.GitSource{Repository: repo.URL, Ref: ref()})
			Eventually(getBD(ctx, name)).Should(And(
				haveCondition("Installed", "True", "InstallationSucceeded", ""),
				HaveField("Status.ResolvedSource.Git.Ref", Equal(rukpakv1alpha2.GitRef{Commit: commit})),
			))
			Expect(ownedCRDs(ctx, name)()).To(ConsistOf("greetings.example.rukpak-kapp.dev"))
		},
		Entry("a commit", "git-commit", func() rukpakv1alpha2.GitRef { return rukpakv1alpha2.GitRef{Commit: commit} }),
		Entry("a tag", "git-tag", func() rukpakv1alpha2.GitRef { return rukpakv1alpha2.GitRef{Tag: "v0.0.1"} }),
		Entry("a branch", "git-branch", func() rukpakv1alpha2.GitRef { return rukpakv1alpha2.GitRef{Branch: "main"} }),
	)

	It("installs from a custom directory", func(ctx context.Context) {
		dirRepo, err := env.Git.NewRepo("dir-"+randSuffix(), filepath.Join("testdata", "namespaced", "manifests"), "dev/deploy/manifests")
		Expect(err).NotTo(HaveOccurred())
		gitBD(ctx, "git-directory", rukpakv1alpha2.GitSource{Repository: dirRepo.URL, Directory: "./dev/deploy", Ref: rukpakv1alpha2.GitRef{Branch: "main"}})
		Eventually(getBD(ctx, "git-directory")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
	})

	It("clones over HTTP with basic auth from a Secret, and fails clearly without it", func(ctx context.Context) {
		private, err := env.PrivateGit.NewRepo("private-"+randSuffix(), filepath.Join("testdata", "namespaced", "manifests"), "manifests")
		Expect(err).NotTo(HaveOccurred())
		basicAuthSecret(ctx, "git-basic-auth", env.PrivateGit.Username, env.PrivateGit.Password)

		gitBD(ctx, "git-noauth", rukpakv1alpha2.GitSource{Repository: private.URL, Ref: rukpakv1alpha2.GitRef{Branch: "main"}})
		Eventually(getBD(ctx, "git-noauth")).Should(haveCondition("Unpacked", "False", "UnpackFailed", "could not read Username for 'https://"+env.PrivateGit.Host))
		deleteAndWait(ctx, "git-noauth")

		g := rukpakv1alpha2.GitSource{Repository: private.URL, Ref: rukpakv1alpha2.GitRef{Branch: "main"}}
		g.Auth.Secret.Name = "git-basic-auth"
		gitBD(ctx, "git-auth", g)
		Eventually(getBD(ctx, "git-auth")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
	})
})
