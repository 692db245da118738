package api_test

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
)

func validBundle(name string) *rukpakv1alpha1.Bundle {
	return &rukpakv1alpha1.Bundle{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: rukpakv1alpha1.BundleSpec{
			ProvisionerClassName: rukpakv1alpha1.ClassPlain,
			Source: rukpakv1alpha1.BundleSource{
				Type:  rukpakv1alpha1.SourceTypeImage,
				Image: &rukpakv1alpha1.ImageSource{Ref: "registry.example/bundles/plain:valid"},
			},
		},
	}
}

func gitV1alpha1(ref rukpakv1alpha1.GitRef) *rukpakv1alpha1.GitSource {
	return &rukpakv1alpha1.GitSource{Repository: "https://git.example/repo", Ref: ref}
}

func configMapsSource(paths ...string) rukpakv1alpha1.BundleSource {
	src := rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeConfigMaps}
	for _, p := range paths {
		src.ConfigMaps = append(src.ConfigMaps, rukpakv1alpha1.ConfigMapSource{ConfigMap: rukpakv1alpha1.LocalObjectReference{Name: "cm"}, Path: p})
	}
	return src
}

func expectInvalid(err error, wantErr string) {
	GinkgoHelper()
	if wantErr == "" {
		Expect(err).NotTo(HaveOccurred())
		return
	}
	Expect(err).To(HaveOccurred())
	Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
	Expect(err.Error()).To(ContainSubstring(wantErr))
}

// Cases from rukpak v0.16.0's api_validation and webhook e2e tests (the
// webhook's checks are CEL rules here, with its messages), plus the edges
// of each rule. An empty wantErr means the API server must accept it.
var _ = DescribeTable("admission of v1alpha1 Bundles",
	func(ctx context.Context, mutate func(*rukpakv1alpha1.Bundle), wantErr string) {
		b := validBundle("admission-case")
		mutate(b)
		expectInvalid(env.Client.Create(ctx, b, client.DryRunAll), wantErr)
	},
	Entry("a valid image Bundle", func(*rukpakv1alpha1.Bundle) {}, ""),
	Entry("a name of exactly 52 characters", func(b *rukpakv1alpha1.Bundle) { b.Name = strings.Repeat("a", 52) }, ""),
	Entry("a name over 52 characters", func(b *rukpakv1alpha1.Bundle) { b.Name = "olm-crds-too-long-name-for-the-bundle-1234567890-1234567890" },
		"metadata.name: Too long: may not be more than 52"),
	Entry("image and git both set", func(b *rukpakv1alpha1.Bundle) { b.Spec.Source.Git = gitV1alpha1(rukpakv1alpha1.GitRef{Branch: "main"}) },
		"must validate one and only one schema (oneOf). Found 2 valid alternatives"),
	Entry("no source at all", func(b *rukpakv1alpha1.Bundle) { b.Spec.Source.Image = nil },
		"must validate one and only one schema (oneOf). Found none valid"),
	Entry("an upload source", func(b *rukpakv1alpha1.Bundle) {
		b.Spec.Source = rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeUpload, Upload: &rukpakv1alpha1.UploadSource{}}
	}, ""),
	Entry("a git ref with a commit and a tag", func(b *rukpakv1alpha1.Bundle) {
		b.Spec.Source = rukpakv1alpha1.BundleSource{Type: "git", Git: gitV1alpha1(rukpakv1alpha1.GitRef{Commit: "abc", Tag: "v1"})}
	}, `"spec.source.git.ref" must validate one and only one schema (oneOf). Found 2 valid alternatives`),
	Entry("an empty git ref", func(b *rukpakv1alpha1.Bundle) {
		b.Spec.Source = rukpakv1alpha1.BundleSource{Type: "git", Git: gitV1alpha1(rukpakv1alpha1.GitRef{})}
	}, `"spec.source.git.ref" must validate one and only one schema (oneOf). Found none valid`),
	Entry("a provisioner class with a slash", func(b *rukpakv1alpha1.Bundle) { b.Spec.ProvisionerClassName = "invalid/class-name" },
		`Invalid value: "invalid/class-name"`),
	Entry("type git with only an image", func(b *rukpakv1alpha1.Bundle) { b.Spec.Source.Type = "git" },
		`bundle.spec.source.git must be set for source type "git"`),
	Entry("type image with only git", func(b *rukpakv1alpha1.Bundle) {
		b.Spec.Source = rukpakv1alpha1.BundleSource{Type: "image", Git: gitV1alpha1(rukpakv1alpha1.GitRef{Branch: "main"})}
	}, `bundle.spec.source.image must be set for source type "image"`),
	Entry("a git directory that climbs out of the repository", func(b *rukpakv1alpha1.Bundle) {
		g := gitV1alpha1(rukpakv1alpha1.GitRef{Branch: "main"})
		g.Directory = "./../etc"
		b.Spec.Source = rukpakv1alpha1.BundleSource{Type: "git", Git: g}
	}, `bundle.spec.source.git.directory begins with "../": directory must define path within the repository`),
	Entry("a git directory inside the repository", func(b *rukpakv1alpha1.Bundle) {
		g := gitV1alpha1(rukpakv1alpha1.GitRef{Branch: "main"})
		g.Directory = "./dev/deploy"
		b.Spec.Source = rukpakv1alpha1.BundleSource{Type: "git", Git: g}
	}, ""),
	Entry("a configMap path outside the bundle root", func(b *rukpakv1alpha1.Bundle) { b.Spec.Source = configMapsSource("manifests", "../escape") },
		"bundle.spec.source.configmaps[].path is invalid: the path is outside bundle root"),
	Entry("configMaps in the bundle", func(b *rukpakv1alpha1.Bundle) { b.Spec.Source = configMapsSource("manifests", "") }, ""),
	Entry("an http source", func(b *rukpakv1alpha1.Bundle) {
		b.Spec.Source = rukpakv1alpha1.BundleSource{Type: "http", HTTP: &rukpakv1alpha1.HTTPSource{URL: "https://x.example/b.tgz"}}
	}, ""),
)

var _ = Describe("a v1alpha1 Bundle's spec", func() {
	It("is immutable, as rukpak v0.16.0's webhook had it; its metadata and status are not", func(ctx context.Context) {
		b := validBundle("immutable-spec")
		Expect(env.Client.Create(ctx, b)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(env.Client.Delete(ctx, b))).To(Succeed()) })

		changed := b.DeepCopy()
		changed.Spec.Source.Image.Ref = "registry.example/bundles/plain:other"
		expectInvalid(env.Client.Update(ctx, changed), "bundle.spec is immutable")
		changed = b.DeepCopy()
		changed.Spec.ProvisionerClassName = rukpakv1alpha1.ClassRegistry
		expectInvalid(env.Client.Update(ctx, changed), "bundle.spec is immutable")

		b.Labels = map[string]string{"e2e-test": "stub"}
		Expect(env.Client.Update(ctx, b)).To(Succeed())
		b.Status.Phase = rukpakv1alpha1.PhaseUnpacked
		Expect(env.Client.Status().Update(ctx, b)).To(Succeed())
	})
})

func validV1alpha1BD(name string) *rukpakv1alpha1.BundleDeployment {
	return &rukpakv1alpha1.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: rukpakv1alpha1.BundleDeploymentSpec{
			ProvisionerClassName: rukpakv1alpha1.ClassPlain,
			Template: rukpakv1alpha1.BundleTemplate{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "my-bundle"}},
				Spec:       validBundle("").Spec,
			},
		},
	}
}

// A v1alpha1 BundleDeployment is stored as v1alpha2, so one the API server
// accepts is then converted. No conversion webhook runs in this suite: an
// accepted object fails at the conversion (after admission), a refused
// one fails admission first.
var _ = DescribeTable("admission of v1alpha1 BundleDeployments",
	func(ctx context.Context, mutate func(*rukpakv1alpha1.BundleDeployment), wantErr string) {
		bd := validV1alpha1BD("admission-case")
		mutate(bd)
		err := env.Client.Create(ctx, bd, client.DryRunAll)
		if wantErr == "" {
			Expect(err).To(MatchError(ContainSubstring("conversion webhook for core.rukpak.io/v1alpha1, Kind=BundleDeployment failed")),
				"admitted, then stored through the conversion webhook")
			return
		}
		expectInvalid(err, wantErr)
	},
	Entry("a valid BundleDeployment", func(*rukpakv1alpha1.BundleDeployment) {}, ""),
	Entry("a name of exactly 45 characters", func(bd *rukpakv1alpha1.BundleDeployment) { bd.Name = strings.Repeat("a", 45) }, ""),
	Entry("a name over 45 characters", func(bd *rukpakv1alpha1.BundleDeployment) { bd.Name = strings.Repeat("a", 46) },
		"metadata.name: Too long: may not be more than 45"),
	Entry("a provisioner class with a slash", func(bd *rukpakv1alpha1.BundleDeployment) { bd.Spec.ProvisionerClassName = "invalid/class-name" },
		`Invalid value: "invalid/class-name"`),
	Entry("a template provisioner class with a slash", func(bd *rukpakv1alpha1.BundleDeployment) {
		bd.Spec.Template.Spec.ProvisionerClassName = "invalid/class-name"
	}, `spec.template.spec.provisionerClassName: Invalid value: "invalid/class-name"`),
	Entry("a template source rukpak checked only on the Bundle it made (two sources)", func(bd *rukpakv1alpha1.BundleDeployment) {
		bd.Spec.Template.Spec.Source.Git = gitV1alpha1(rukpakv1alpha1.GitRef{Branch: "main"})
	}, ""),
	Entry("a template without a spec", func(bd *rukpakv1alpha1.BundleDeployment) {
		bd.Spec.Template.Spec = rukpakv1alpha1.BundleSpec{}
	}, "spec.template.spec.provisionerClassName"),
)
