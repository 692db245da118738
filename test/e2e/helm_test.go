package e2e_test

import (
	"context"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// The chart newcomers install with `make run`.
var chartsDir = filepath.Join("..", "..", "examples", "charts")

func withValues(values string) func(*rukpakv1alpha2.BundleDeployment) {
	return func(bd *rukpakv1alpha2.BundleDeployment) {
		bd.Spec.Config = &apiextensionsv1.JSON{Raw: []byte(`{"values":` + quoteJSON(values) + `}`)}
	}
}

// availableDeployment waits for default/name to be Available on the fake nodes.
func availableDeployment(ctx context.Context, name string) {
	EventuallyWithOffset(1, func(g Gomega) {
		dep := &appsv1.Deployment{}
		g.Expect(env.Client.Get(ctx, objKey("default", name), dep)).To(Succeed())
		g.Expect(dep.Status.Conditions).To(ContainElement(And(
			HaveField("Type", appsv1.DeploymentAvailable), HaveField("Status", corev1.ConditionTrue),
		)))
	}).WithContext(ctx).Should(Succeed())
}

// configMapOfDir makes a ConfigMap of the regular files directly in dir.
func configMapOfDir(ctx context.Context, name, dir string) {
	entries, err := os.ReadDir(dir)
	Expect(err).NotTo(HaveOccurred())
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: harness.SystemNamespace}, Data: map[string]string{}}
	for _, e := range entries {
		if e.Type().IsRegular() {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			Expect(err).NotTo(HaveOccurred())
			cm.Data[e.Name()] = string(data)
		}
	}
	Expect(env.Client.Create(ctx, cm)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, cm) })
}

var _ = Describe("helm bundles", func() {
	chart := filepath.Join(chartsDir, "hello-world")

	It("installs a chart from HTTP with its CRDs, labels everything, and re-creates a deleted Deployment", func(ctx context.Context) {
		// helm package layout: the chart in a single top-level directory.
		tgz, err := harness.TarGz(chartsDir)
		Expect(err).NotTo(HaveOccurred())
		url := env.Files.Put("/charts/hello-world-0.1.0.tgz", tgz)
		helmBD(ctx, "helm-http", rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP, HTTP: &rukpakv1alpha2.HTTPSource{URL: url}},
			func(bd *rukpakv1alpha2.BundleDeployment) {
				// Drift repair at kapp-controller's floor instead of the default 10 minutes.
				bd.Annotations = map[string]string{rukpakv1alpha2.AnnotationSyncPeriod: "30s"}
			})
		Eventually(getBD(ctx, "helm-http")).Should(And(
			haveCondition("Unpacked", "True", "UnpackSuccessful", ""),
			haveCondition("Installed", "True", "InstallationSucceeded", ""),
			HaveField("Status.ResolvedSource.HTTP.URL", Equal(url)),
		))
		availableDeployment(ctx, "helm-http-hello-world")
		// The chart's crds/: there, as Helm leaves them, owned by no App.
		Expect(ownedCRDs(ctx, "helm-http")()).To(BeEmpty())
		Expect(chartCRDLabels(ctx)).NotTo(HaveKey("kapp.k14s.io/app"))
		dep := &appsv1.Deployment{}
		Expect(env.Client.Get(ctx, objKey("default", "helm-http-hello-world"), dep)).To(Succeed())
		Expect(dep.Labels).To(HaveKeyWithValue(rukpakv1alpha2.LabelOwnerName, "helm-http"))
		oldUID := dep.UID

		Expect(env.Client.Delete(ctx, dep)).To(Succeed())
		Eventually(func(g Gomega) {
			again := &appsv1.Deployment{}
			g.Expect(env.Client.Get(ctx, objKey("default", "helm-http-hello-world"), again)).To(Succeed())
			g.Expect(again.UID).NotTo(Equal(oldUID))
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		availableDeployment(ctx, "helm-http-hello-world")
	})

	It("installs a chart from git, in a directory holding the chart's directory, and follows config.values", func(ctx context.Context) {
		repo, err := env.Git.NewRepo("charts-"+randSuffix(), chart, "charts/hello-world")
		Expect(err).NotTo(HaveOccurred())
		commit, err := repo.Head()
		Expect(err).NotTo(HaveOccurred())
		src := rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeGit, Git: &rukpakv1alpha2.GitSource{
			Repository: repo.URL, Directory: "./charts", Ref: rukpakv1alpha2.GitRef{Branch: "main"},
		}}
		helmBD(ctx, "helm-git", src)
		Eventually(getBD(ctx, "helm-git")).Should(And(
			haveCondition("Installed", "True", "InstallationSucceeded", ""),
			HaveField("Status.ResolvedSource.Git.Ref", Equal(rukpakv1alpha2.GitRef{Commit: commit})),
		))
		availableDeployment(ctx, "helm-git-hello-world")

		Expect(harness.Edit(ctx, env.Client, mustBD(ctx, "helm-git"), withValues("replicaCount: 2\nnameOverride: fromvalues\n"))).To(Succeed())
		Eventually(getBD(ctx, "helm-git")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		availableDeployment(ctx, "helm-git-fromvalues")
		dep := &appsv1.Deployment{}
		Expect(env.Client.Get(ctx, objKey("default", "helm-git-fromvalues"), dep)).To(Succeed())
		Expect(*dep.Spec.Replicas).To(BeEquivalentTo(2))
		Eventually(func() error {
			return env.Client.Get(ctx, objKey("default", "helm-git-hello-world"), &appsv1.Deployment{})
		}).WithContext(ctx).Should(MatchError(ContainSubstring("not found")), "the renamed Deployment replaces the old one")
	})

	It("installs a chart from an image with the chart at its root", func(ctx context.Context) {
		ref, _, err := env.Registry.PushDir(chart, "charts/hello-world:0.1.0")
		Expect(err).NotTo(HaveOccurred())
		helmBD(ctx, "helm-image", rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: ref}},
			withValues("greeting: from-values\n"))
		Eventually(getBD(ctx, "helm-image")).Should(And(
			haveCondition("Installed", "True", "InstallationSucceeded", ""),
			HaveField("Status.ResolvedSource.Image.Ref", ContainSubstring("@sha256:")),
		))
		availableDeployment(ctx, "helm-image-hello-world")
		dep := &appsv1.Deployment{}
		Expect(env.Client.Get(ctx, objKey("default", "helm-image-hello-world"), dep)).To(Succeed())
		Expect(dep.Spec.Template.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: "GREETING", Value: "from-values"}))
	})

	It("installs a chart assembled from ConfigMaps and picks up a changed ConfigMap", func(ctx context.Context) {
		configMapOfDir(ctx, "chart-root", chart)
		configMapOfDir(ctx, "chart-templates", filepath.Join(chart, "templates"))
		configMapOfDir(ctx, "chart-crds", filepath.Join(chart, "crds"))
		helmBD(ctx, "helm-configmaps", rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeConfigMaps, ConfigMaps: []rukpakv1alpha2.ConfigMapSource{
			{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: "chart-root"}},
			{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: "chart-templates"}, Path: "templates"},
			{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: "chart-crds"}, Path: "crds"},
		}})
		Eventually(getBD(ctx, "helm-configmaps")).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		availableDeployment(ctx, "helm-configmaps-hello-world")

		root := &corev1.ConfigMap{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: "chart-root"}, root)).To(Succeed())
		root.Data["values.yaml"] = "replicaCount: 1\nnameOverride: edited\ngreeting: hi\n"
		Expect(env.Client.Update(ctx, root)).To(Succeed())
		availableDeployment(ctx, "helm-configmaps-edited")
	})

	It("names a chart whose templates fail on the values, without installing anything", func(ctx context.Context) {
		tgz, err := harness.TarGz(chartsDir)
		Expect(err).NotTo(HaveOccurred())
		url := env.Files.Put("/charts/values-test.tgz", tgz)
		helmBD(ctx, "helm-template-error", rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP, HTTP: &rukpakv1alpha2.HTTPSource{URL: url}},
			withValues("replicaCount: not-a-number\n"))
		Eventually(getBD(ctx, "helm-template-error")).Should(haveCondition("Installed", "False", "InstallFailed", "replicas"))
	})
})
