package e2e_test

import (
	"context"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// The other half of rukpak v0.16.0's v1alpha1 cases (v1alpha1_test.go has
// the helpers and the plain bundles), in the other half of the suite.
var _ = Describe("rukpak v0.16.0's v1alpha1 BundleDeployments of each class and source", func() {
	It("registry+v1, helm, configMaps and http sources, rukpak's examples, and no upload", func(ctx context.Context) {
		registryValid, _, err := env.Registry.PushDir(filepath.Join(bundlesDir, "registry", "valid"), "bundles/registry:valid")
		Expect(err).NotTo(HaveOccurred())
		registryInvalid, _, err := env.Registry.PushDir(filepath.Join(bundlesDir, "registry", "invalid"), "bundles/registry:invalid")
		Expect(err).NotTo(HaveOccurred())
		combo, _, err := env.Registry.PushDir(bdtest.Testdata("rukpak-e2e-sources", "operator-framework-combo"), "operator-framework/combo-bundle:v0.0.1")
		Expect(err).NotTo(HaveOccurred())
		tgz, err := harness.TarGz(chartsDir)
		Expect(err).NotTo(HaveOccurred())
		chartURL := env.Files.Put("/v1alpha1/hello-world-0.1.0.tgz", tgz)
		notChart, err := harness.TarGz(filepath.Join(bundlesDir, "plain-v0", "valid"))
		Expect(err).NotTo(HaveOccurred())
		notChartURL := env.Files.Put("/v1alpha1/examples-hello-world-0.1.0.tar.gz", notChart)
		licenseURL := env.Files.Put("/v1alpha1/LICENSE", []byte("Apache License\nVersion 2.0, January 2004\n"))
		chartRepo, err := env.Git.NewRepo("v016-charts-"+randSuffix(), filepath.Join(chartsDir, "hello-world"), "charts/hello-world")
		Expect(err).NotTo(HaveOccurred())
		configMapOfDir(ctx, "v016-valid-manifests", filepath.Join(bundlesDir, "plain-v0", "valid", "manifests"))
		cmSource := func(names ...string) rukpakv1alpha1.BundleSource {
			src := rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeConfigMaps}
			for _, n := range names {
				src.ConfigMaps = append(src.ConfigMaps, rukpakv1alpha1.ConfigMapSource{ConfigMap: rukpakv1alpha1.LocalObjectReference{Name: n}, Path: "manifests"})
			}
			return src
		}
		runCases(ctx, []v016Case{
			// docs/provisioners/registry.md: prometheus, a plain BundleDeployment of a registry template.
			{name: "prometheus", class: rukpakv1alpha1.ClassRegistry, src: image(registryValid), want: installedAsIs},
			{name: "registry-invalid", class: rukpakv1alpha1.ClassRegistry, src: image(registryInvalid),
				want: failedToUnpack("convert registry+v1 bundle to plain+v0 bundle: AllNamespace install mode must be enabled")},
			// docs/provisioners/plain.md: combo.
			{name: "combo", class: rukpakv1alpha1.ClassPlain, src: image(combo), want: installedAsIs},
			// docs/provisioners/helm.md and the helm specs.
			{name: "my-ahoy", class: rukpakv1alpha1.ClassHelm, src: httpSource(chartURL), config: "replicaCount: 1\nnameOverride: fromvalues\n", want: And(unpacked, installed)},
			{name: "ahoy-git", class: rukpakv1alpha1.ClassHelm, src: gitSource(chartRepo.URL, "./charts", rukpakv1alpha1.GitRef{Branch: "main"}), want: And(unpacked, installed)},
			{name: "ahoy-404", class: rukpakv1alpha1.ClassHelm, src: httpSource(env.Files.URL("/v1alpha1/xxx")), want: failedToUnpack(`unexpected status "404 Not Found"`)},
			{name: "ahoy-license", class: rukpakv1alpha1.ClassHelm, src: httpSource(licenseURL), want: failedToUnpack("gzip: invalid header")},
			{name: "ahoy-not-a-chart", class: rukpakv1alpha1.ClassHelm, src: httpSource(notChartURL), want: failedToUnpack("Chart.yaml file is missing")},
			{name: "configmaps", class: rukpakv1alpha1.ClassPlain, src: cmSource("v016-valid-manifests"), want: installedAsIs},
			{name: "configmaps-missing", class: rukpakv1alpha1.ClassPlain, src: cmSource("non-exist"),
				want: failedToUnpack(`get configmap ` + harness.SystemNamespace + `/non-exist: ConfigMap "non-exist" not found`)},
			{name: "uploaded", class: rukpakv1alpha1.ClassPlain, src: rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeUpload, Upload: &rukpakv1alpha1.UploadSource{}},
				want: failedToUnpack(`source type "upload" is not served by rukpak-kapp`)},
		})

		By("registry+v1 went into the bundle's own namespace, which it made; helm and plain objects into the system namespace")
		Expect(env.Client.Get(ctx, objKey("", "prometheus-system"), &corev1.Namespace{})).To(Succeed())
		Expect(env.Client.Get(ctx, objKey("prometheus-system", "prometheus-operator"), &appsv1.Deployment{})).To(Succeed())
		for _, dep := range []client.ObjectKey{objKey(harness.SystemNamespace, "my-ahoy-fromvalues"), objKey(harness.SystemNamespace, "ahoy-git-hello-world"), objKey("combo", "combo-operator")} {
			Eventually(func(g Gomega) {
				d := &appsv1.Deployment{}
				g.Expect(env.Client.Get(ctx, dep, d)).To(Succeed())
				g.Expect(d.Status.Conditions).To(ContainElement(And(HaveField("Type", appsv1.DeploymentAvailable), HaveField("Status", corev1.ConditionTrue))))
			}).WithContext(ctx).Should(Succeed(), "%s", dep)
		}
		Expect(bundlesOf(ctx, "my-ahoy")()).To(ConsistOf(And(
			bdtest.HaveBundlePhase(rukpakv1alpha1.PhaseUnpacked, "True", "UnpackSuccessful", ""),
			HaveField("Status.ResolvedSource.HTTP.URL", chartURL))))
	})
})
