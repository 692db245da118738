package conformance_test

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// The commits of github.com/exdx/combo-bundle that rukpak's git specs
// fetch (test/testdata/rukpak-e2e-sources).
const (
	comboCommit = "9e3ab7f1a36302ef512294d5c9f2e9b9566b811e" // the pinned commit and tag v0.0.1
	comboMain   = "d5a89377ae4913c788f8f572aaeb6ed2ca660d2e" // main
	comboRepo   = "https://github.com/exdx/combo-bundle"
)

const ownSpecs = "what a user sees instead of the specs skipped in rukpak's suite:"

// replacementText is the full text of the spec that stands in for a
// skipped one.
func replacementText(name string) string { return "conformance " + ownSpecs + " " + name }

// replacements stand in for the specs of rukpak's suite that need a
// running Pod (expectations_test.go names them by these keys). Where rukpak's
// spec saw the bundle's tarball in its cache, these see what a user of
// rukpak-kapp sees: Unpacked, the commit in status.resolvedSource, the
// bundle installed. Each runs the same BundleDeployment as the skipped spec.
var replacements = map[string]func(context.Context){
	"a git commit": func(ctx context.Context) {
		unpackedAndInstalled(ctx, "combo-git-commit", rukpakv1alpha2.GitSource{Repository: comboRepo, Ref: rukpakv1alpha2.GitRef{Commit: comboCommit}}, comboCommit)
	},
	"a git tag": func(ctx context.Context) {
		unpackedAndInstalled(ctx, "combo-git-tag", rukpakv1alpha2.GitSource{Repository: comboRepo, Ref: rukpakv1alpha2.GitRef{Tag: "v0.0.1"}}, comboCommit)
	},
	"a git branch": func(ctx context.Context) {
		unpackedAndInstalled(ctx, "combo-git-branch", rukpakv1alpha2.GitSource{Repository: comboRepo + ".git", Ref: rukpakv1alpha2.GitRef{Branch: "main"}}, comboMain)
	},
	"a custom manifests directory": func(ctx context.Context) {
		unpackedAndInstalled(ctx, "combo-git-custom-dir", rukpakv1alpha2.GitSource{Repository: comboRepo, Directory: "./dev/deploy", Ref: rukpakv1alpha2.GitRef{Branch: "main"}}, comboMain)
	},
	"a private repository": func(ctx context.Context) {
		// rukpak's spec reads PRIVATE_GIT_REPO and basic-auth credentials
		// from its environment; here, the harness's https server behind
		// basic auth, with rukpak's Secret layout.
		repo, err := env.PrivateGit.NewRepo("combo-"+bdtest.RandSuffix(), bdtest.Testdata("rukpak-e2e-sources", "operator-framework-combo", "manifests"), "manifests")
		Expect(err).NotTo(HaveOccurred())
		head, err := repo.Head()
		Expect(err).NotTo(HaveOccurred())
		secret := "gitsecret-" + bdtest.RandSuffix()
		bdtest.BasicAuthSecret(ctx, secret, env.PrivateGit.Username, env.PrivateGit.Password)
		src := rukpakv1alpha2.GitSource{Repository: repo.URL, Ref: rukpakv1alpha2.GitRef{Branch: "main"}}
		src.Auth.Secret.Name = secret
		unpackedAndInstalled(ctx, "combo-git-private", src, head)
	},
	"a local git repository over ssh": func(ctx context.Context) {
		src := rukpakv1alpha2.GitSource{Repository: harness.RukpakLocalGitRepo, Ref: rukpakv1alpha2.GitRef{Branch: "main"}}
		src.Auth.Secret.Name = "gitsecret"
		src.Auth.InsecureSkipVerify = true
		unpackedAndInstalled(ctx, "combo-git-local", src, env.RukpakE2E.LocalGitCommit)
	},
	"the content of a valid bundle": func(ctx context.Context) {
		// rukpak's spec downloaded status.contentURL with the token of an
		// account bound to bundle-reader, from a Job's Pod, and listed the
		// tarball's seven files; here the same download runs from the test,
		// trusting the adapter's webhook CA as a pod would, and the objects
		// of those seven files are what it installed.
		name := unpackedAndInstalled(ctx, "combo-git-content", rukpakv1alpha2.GitSource{Repository: comboRepo, Ref: rukpakv1alpha2.GitRef{Commit: comboCommit}}, comboCommit)
		url := bdtest.MustBD(ctx, name).Status.ContentURL
		Expect(url).To(HaveSuffix("/bundles/bundledeployments/" + name + ".tgz"))
		c, err := env.ContentClient(ctx)
		Expect(err).NotTo(HaveOccurred())
		token, err := env.AccountToken(ctx, "default", "content-reader-"+bdtest.RandSuffix(), "bundle-reader")
		Expect(err).NotTo(HaveOccurred())
		code, entries, body, err := bdtest.Download(ctx, c, url, token)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK), body)
		Expect(entries).To(ContainElements("manifests/00_namespace.yaml", "manifests/01_cluster_role.yaml", "manifests/01_service_account.yaml",
			"manifests/02_deployment.yaml", "manifests/03_cluster_role_binding.yaml", "manifests/combo.io_combinations.yaml", "manifests/combo.io_templates.yaml"))
		for file, obj := range map[string]client.Object{
			"00_namespace.yaml":            &corev1.Namespace{},
			"01_cluster_role.yaml":         &rbacv1.ClusterRole{},
			"01_service_account.yaml":      &corev1.ServiceAccount{},
			"02_deployment.yaml":           &appsv1.Deployment{},
			"03_cluster_role_binding.yaml": &rbacv1.ClusterRoleBinding{},
			"combo.io_combinations.yaml":   &apiextensionsv1.CustomResourceDefinition{},
			"combo.io_templates.yaml":      &apiextensionsv1.CustomResourceDefinition{},
		} {
			key := client.ObjectKey{Name: "combo-operator"}
			switch file {
			case "00_namespace.yaml":
				key.Name = "combo"
			case "01_service_account.yaml", "02_deployment.yaml":
				key.Namespace = "combo"
			case "combo.io_combinations.yaml":
				key.Name = "combinations.combo.io"
			case "combo.io_templates.yaml":
				key.Name = "templates.combo.io"
			}
			Expect(env.Client.Get(ctx, key, obj)).To(Succeed(), "the object of manifests/%s", file)
			Expect(obj.GetLabels()).To(HaveKeyWithValue(rukpakv1alpha2.LabelOwnerName, name), "manifests/%s is labelled as installed by %s", file, name)
		}
	},
}

// The suite's specs run in this order, one after the other: this suite's
// own while rukpak's runs alongside them, then the check of rukpak's.
var _ = Describe("conformance", Ordered, func() {
	Describe(ownSpecs, func() {
		for _, name := range slices.Sorted(maps.Keys(replacements)) {
			It(name, func(ctx context.Context) { replacements[name](ctx) })
		}
	})
	It("rukpak "+rukpakVersion+"'s end-to-end suite runs unchanged: each spec passes, is skipped for the Pod it needs, or fails as a listed difference",
		upstreamSpec, NodeTimeout(25*time.Minute))
})

// unpackedAndInstalled creates a plain BundleDeployment of the git source
// (deleted, and its removal awaited, when the spec ends: rukpak's git specs
// all install the same objects) and waits for it to say Unpacked with the
// commit in resolvedSource, then Installed. It returns the name.
func unpackedAndInstalled(ctx context.Context, prefix string, src rukpakv1alpha2.GitSource, commit string) string {
	name := prefix + "-" + bdtest.RandSuffix()
	bdtest.GitBD(ctx, name, src)
	Eventually(bdtest.GetBD(ctx, name)).WithContext(ctx).Should(bdtest.HaveCondition(rukpakv1alpha2.TypeUnpacked, "True", rukpakv1alpha2.ReasonUnpackSuccessful, "Successfully unpacked the git Bundle"))
	Eventually(bdtest.GetBD(ctx, name)).WithContext(ctx).Should(bdtest.HaveCondition(rukpakv1alpha2.TypeInstalled, "True", rukpakv1alpha2.ReasonInstallationSucceeded, "Instantiated bundle "+name))
	resolved := bdtest.MustBD(ctx, name).Status.ResolvedSource
	Expect(resolved).NotTo(BeNil())
	Expect(resolved.Type).To(Equal(rukpakv1alpha2.SourceTypeGit))
	Expect(resolved.Git).NotTo(BeNil())
	Expect(resolved.Git.Ref).To(Equal(rukpakv1alpha2.GitRef{Commit: commit}))
	Expect(resolved.Git.Repository).To(Equal(src.Repository))
	Expect(resolved.Git.Directory).To(Equal(src.Directory))
	return name
}
