package api_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func validBD(name string) *rukpakv1alpha2.BundleDeployment {
	return &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: rukpakv1alpha2.BundleDeploymentSpec{
			InstallNamespace:     "default",
			ProvisionerClassName: rukpakv1alpha2.ClassPlain,
			Source: rukpakv1alpha2.BundleSource{
				Type:  rukpakv1alpha2.SourceTypeImage,
				Image: &rukpakv1alpha2.ImageSource{Ref: "registry.example/bundles/plain:valid"},
			},
		},
	}
}

func git(ref rukpakv1alpha2.GitRef) *rukpakv1alpha2.GitSource {
	return &rukpakv1alpha2.GitSource{Repository: "https://git.example/repo", Ref: ref}
}

// Cases from rukpak v0.24.0's api_validation and webhook e2e tests, plus the
// edges of each rule. An empty wantErr means the API server must accept it.
var _ = DescribeTable("admission of BundleDeployments",
	func(ctx context.Context, mutate func(*rukpakv1alpha2.BundleDeployment), wantErr string) {
		bd := validBD("admission-case")
		mutate(bd)
		err := env.Client.Create(ctx, bd, client.DryRunAll)
		if wantErr == "" {
			Expect(err).NotTo(HaveOccurred())
			return
		}
		Expect(err).To(HaveOccurred())
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
		Expect(err.Error()).To(ContainSubstring(wantErr))
	},
	Entry("a valid image BD", func(*rukpakv1alpha2.BundleDeployment) {}, ""),
	Entry("a name of exactly 52 characters", func(bd *rukpakv1alpha2.BundleDeployment) { bd.Name = strings.Repeat("a", 52) }, ""),
	Entry("a name over 52 characters", func(bd *rukpakv1alpha2.BundleDeployment) { bd.Name = strings.Repeat("a", 60) },
		"metadata.name: Too long: may not be more than 52"),
	Entry("image and git both set", func(bd *rukpakv1alpha2.BundleDeployment) {
		bd.Spec.Source.Git = git(rukpakv1alpha2.GitRef{Branch: "main"})
	}, "must validate one and only one schema (oneOf). Found 2 valid alternatives"),
	Entry("no source at all", func(bd *rukpakv1alpha2.BundleDeployment) { bd.Spec.Source.Image = nil },
		"must validate one and only one schema (oneOf). Found none valid"),
	Entry("a git ref with a commit and a tag", func(bd *rukpakv1alpha2.BundleDeployment) {
		bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: "git", Git: git(rukpakv1alpha2.GitRef{Commit: "abc", Tag: "v1"})}
	}, `"spec.source.git.ref" must validate one and only one schema (oneOf). Found 2 valid alternatives`),
	Entry("an empty git ref", func(bd *rukpakv1alpha2.BundleDeployment) {
		bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: "git", Git: git(rukpakv1alpha2.GitRef{})}
	}, "Found none valid"),
	Entry("a git branch", func(bd *rukpakv1alpha2.BundleDeployment) {
		bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: "git", Git: git(rukpakv1alpha2.GitRef{Branch: "main"})}
	}, ""),
	Entry("a provisioner class with a slash", func(bd *rukpakv1alpha2.BundleDeployment) { bd.Spec.ProvisionerClassName = "invalid/class-name" },
		`Invalid value: "invalid/class-name"`),
	Entry("an unknown but well-formed class", func(bd *rukpakv1alpha2.BundleDeployment) { bd.Spec.ProvisionerClassName = "non-existent-class-name" }, ""),
	Entry("no install namespace", func(bd *rukpakv1alpha2.BundleDeployment) { bd.Spec.InstallNamespace = "" }, "spec.installNamespace"),
	Entry("an install namespace with capitals", func(bd *rukpakv1alpha2.BundleDeployment) { bd.Spec.InstallNamespace = "Default" }, "spec.installNamespace"),
	Entry("type git with only an image", func(bd *rukpakv1alpha2.BundleDeployment) { bd.Spec.Source.Type = "git" },
		`bundledeployment.spec.source.git must be set for source type "git"`),
	Entry("type image with only git", func(bd *rukpakv1alpha2.BundleDeployment) {
		bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: "image", Git: git(rukpakv1alpha2.GitRef{Branch: "main"})}
	}, `bundledeployment.spec.source.image must be set for source type "image"`),
	Entry("a git directory that climbs out of the repository", func(bd *rukpakv1alpha2.BundleDeployment) {
		g := git(rukpakv1alpha2.GitRef{Branch: "main"})
		g.Directory = "../../etc"
		bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: "git", Git: g}
	}, `directory begins with "../": directory must define path within the repository`),
	Entry("a git directory inside the repository", func(bd *rukpakv1alpha2.BundleDeployment) {
		g := git(rukpakv1alpha2.GitRef{Branch: "main"})
		g.Directory = "./dev/deploy"
		bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: "git", Git: g}
	}, ""),
	Entry("a configMap path outside the bundle root", func(bd *rukpakv1alpha2.BundleDeployment) {
		bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: "configMaps", ConfigMaps: []rukpakv1alpha2.ConfigMapSource{
			{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: "cm"}, Path: "../escape"},
		}}
	}, "path is outside bundle root"),
	Entry("an absolute configMap path", func(bd *rukpakv1alpha2.BundleDeployment) {
		bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: "configMaps", ConfigMaps: []rukpakv1alpha2.ConfigMapSource{
			{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: "cm"}, Path: "/etc"},
		}}
	}, "path is outside bundle root"),
	Entry("configMaps in the bundle", func(bd *rukpakv1alpha2.BundleDeployment) {
		bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: "configMaps", ConfigMaps: []rukpakv1alpha2.ConfigMapSource{
			{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: "cm"}, Path: "manifests"},
		}}
	}, ""),
	Entry("an http source", func(bd *rukpakv1alpha2.BundleDeployment) {
		bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: "http", HTTP: &rukpakv1alpha2.HTTPSource{URL: "https://x.example/b.tgz"}}
	}, ""),
	Entry("free-form config", func(bd *rukpakv1alpha2.BundleDeployment) {
		bd.Spec.Config = &apiextensionsv1.JSON{Raw: []byte(`{"values":"a: 1","watchNamespaces":["x"]}`)}
	}, ""),
)

var _ = Describe("the finalizer policy (config/admission)", func() {
	It("adds the uninstall finalizer to claimed classes at creation, and leaves other classes alone", func(ctx context.Context) {
		// Policies are loaded asynchronously after they are created.
		Eventually(func() ([]string, error) {
			bd := validBD("finalizer-policy-claimed")
			err := env.Client.Create(ctx, bd, client.DryRunAll)
			return bd.Finalizers, err
		}).WithTimeout(30 * time.Second).Should(ConsistOf("core.rukpak.io/uninstall"))

		bd := validBD("finalizer-policy-kept")
		bd.Finalizers = []string{"example.com/other"}
		Expect(env.Client.Create(ctx, bd, client.DryRunAll)).To(Succeed())
		Expect(bd.Finalizers).To(ConsistOf("example.com/other", "core.rukpak.io/uninstall"))

		foreign := validBD("finalizer-policy-foreign")
		foreign.Spec.ProvisionerClassName = "example-com-other"
		Expect(env.Client.Create(ctx, foreign, client.DryRunAll)).To(Succeed())
		Expect(foreign.Finalizers).To(BeEmpty())
	})
})
