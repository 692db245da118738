package packaging_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// The exported objects go where the adapter's Apps go, so the PackageInstall
// uses the installer account config/rbac already made there.
const pkgNamespace = harness.SystemNamespace

var _ = Describe("render --as-package", func() {
	It("exports a plain bundle from an image: the Package fetches the image by digest, and kctrl's lists show it", func(ctx context.Context) {
		ref, digest, err := env.Registry.PushDir(filepath.Join(env.Root, "examples", "bundles", "plain-hello"), "export/plain-hello:v1")
		Expect(err).NotTo(HaveOccurred())
		out := renderPackage(plainBD("export-plain", rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: ref}}))
		Expect(out).To(ContainSubstring("# note: export-plain: version 0.0.0-sha256-"), "the content version is explained")
		pkg := installExport(ctx, out, "export-plain")
		Expect(pkg.Spec.Template.Spec.Fetch[0].Image.URL).To(HaveSuffix("@" + digest.String()))
		Expect(pkg.Spec.Version).To(MatchRegexp(`^0\.0\.0-sha256-[0-9a-f]{16}$`))
		expectPlainHello(ctx, "export-plain")

		By("listing it as kctrl package available list / installed list do")
		summaries, err := harness.KctrlAvailableList(ctx, env.ControlPlane.Config, pkgNamespace)
		Expect(err).NotTo(HaveOccurred())
		Expect(summaries).To(ContainElement(harness.PackageSummary{Namespace: pkgNamespace, Name: "export-plain.bundles.rukpak-kapp.dev",
			DisplayName: "export-plain", ShortDescription: "Bundle export-plain"}))
		versions, err := harness.KctrlAvailableVersions(ctx, env.ControlPlane.Config, pkgNamespace, "export-plain.bundles.rukpak-kapp.dev")
		Expect(err).NotTo(HaveOccurred())
		Expect(versions).To(Equal([]harness.AvailablePackage{{Namespace: pkgNamespace, Name: "export-plain.bundles.rukpak-kapp.dev", Version: pkg.Spec.Version}}))
		installed, err := harness.KctrlInstalledList(ctx, env.ControlPlane.Config, pkgNamespace)
		Expect(err).NotTo(HaveOccurred())
		Expect(installed).To(ContainElement(And(
			HaveField("Name", "export-plain"), HaveField("PackageName", "export-plain.bundles.rukpak-kapp.dev"),
			HaveField("PackageVersion", pkg.Spec.Version), HaveField("Status", "Reconcile succeeded"))))
	})

	It("exports a plain bundle tracking a git branch, pinned to the commit it fetched, with the version from the annotation", func(ctx context.Context) {
		repo, err := env.Git.NewRepo("export-plain", filepath.Join(env.Root, "examples", "bundles", "plain-hello"), "deploy/hello")
		Expect(err).NotTo(HaveOccurred())
		head, err := repo.Head()
		Expect(err).NotTo(HaveOccurred())
		bd := plainBD("export-git", rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeGit, Git: &rukpakv1alpha2.GitSource{
			Repository: repo.URL, Directory: "deploy/hello", Ref: rukpakv1alpha2.GitRef{Branch: "main"},
		}})
		bd.Annotations = map[string]string{rukpakv1alpha2.AnnotationPackageVersion: "1.2.0"}
		out := renderPackage(bd)
		Expect(out).NotTo(ContainSubstring("# note:"))
		pkg := installExport(ctx, out, "export-git")
		Expect(pkg.Name).To(Equal("export-git.bundles.rukpak-kapp.dev.1.2.0"))
		Expect(pkg.Spec.Template.Spec.Fetch[0].Git).To(And(HaveField("Ref", head), HaveField("SubPath", "deploy/hello")))
		expectPlainHello(ctx, "export-git")
	})

	It("exports a helm chart from http at its chart version with a values Secret that the PackageInstall applies, and follows a change of it", func(ctx context.Context) {
		url := serveChart()
		out := renderPackage(helmBD("export-helm", url, "replicaCount: 2\ngreeting: exported\n"))
		Expect(out).To(ContainSubstring("# note: export-helm: the Package downloads " + url))
		pkg := installExport(ctx, out, "export-helm")
		Expect(pkg.Name).To(Equal("export-helm.bundles.rukpak-kapp.dev.0.1.0"))
		Expect(pkg.Spec.Template.Spec.Fetch[0].HTTP.URL).To(Equal(url))
		dep := &appsv1.Deployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "export-helm-hello-world"}, dep)).To(Succeed())
		Expect(*dep.Spec.Replicas).To(BeEquivalentTo(2))
		Expect(dep.Spec.Template.Spec.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: "GREETING", Value: "exported"}))
		Expect(dep.Labels).To(HaveKeyWithValue(rukpakv1alpha2.LabelOwnerName, "export-helm"))

		By("changing the values Secret, as a user of the package would")
		secret := &corev1.Secret{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: pkgNamespace, Name: "export-helm-values"}, secret)).To(Succeed())
		secret.Data = map[string][]byte{"values.yaml": []byte("replicaCount: 3\ngreeting: exported\n")}
		Expect(env.Client.Update(ctx, secret)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(dep), dep)).To(Succeed())
			g.Expect(*dep.Spec.Replicas).To(BeEquivalentTo(3))
		}).WithContext(ctx).Should(Succeed())
	})

	It("exports a helm chart pushed with --push as an imgpkg bundle the Package fetches by digest", func(ctx context.Context) {
		repo := env.Registry.Host + "/exported/helm-pushed"
		out := renderPackage(helmBD("export-helm-pushed", serveChart(), ""), "--push", repo)
		Expect(out).NotTo(ContainSubstring("# note:"), "the pushed content does not change with the download")
		pkg := installExport(ctx, out, "export-helm-pushed")
		Expect(pkg.Spec.Template.Spec.Fetch[0].ImgpkgBundle.Image).To(HavePrefix(repo + "@sha256:"))
		Expect(pkg.Spec.Template.Spec.Template[0].HelmTemplate.Path).To(Equal("chart"))
		dep := &appsv1.Deployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "export-helm-pushed-hello-world"}, dep)).To(Succeed())
		Expect(*dep.Spec.Replicas).To(BeEquivalentTo(1), "the chart's default values")

		By("pushing the same content again: the same digest")
		again := renderPackage(helmBD("export-helm-pushed", serveChart(), ""), "--push", repo)
		Expect(again).To(ContainSubstring(pkg.Spec.Template.Spec.Fetch[0].ImgpkgBundle.Image))
	})

	It("exports a registry+v1 bundle converted for its own namespace, inline, at its CSV's version", func(ctx context.Context) {
		const ns = "export-dvo"
		createNamespace(ctx, ns)
		ref, _, err := env.Registry.PushDir(corpus("deployment-validation-operator", "0.7.12"), "export/dvo:0.7.12")
		Expect(err).NotTo(HaveOccurred())
		bd := registryBD("export-dvo", ref, ns)
		bd.Spec.Config = &apiextensionsv1.JSON{Raw: []byte(`{"watchNamespaces":["` + ns + `"]}`)}
		pkg := installExport(ctx, renderPackage(bd), "export-dvo")
		Expect(pkg.Name).To(Equal("export-dvo.bundles.rukpak-kapp.dev.0.7.12"))
		Expect(pkg.Spec.Template.Spec.Fetch[0].Inline.Paths).To(HaveKey("manifests/0000.yaml"))
		deps := &appsv1.DeploymentList{}
		Expect(env.Client.List(ctx, deps, client.InNamespace(ns))).To(Succeed())
		Expect(deps.Items).To(HaveLen(1))
		Expect(deps.Items[0].Spec.Template.Annotations).To(HaveKeyWithValue("olm.targetNamespaces", ns))
	})

	It("exports a registry+v1 bundle with webhooks, pushed with --push, and says the Package carries their keys", func(ctx context.Context) {
		const ns = "export-kube-green"
		createNamespace(ctx, ns)
		ref, _, err := env.Registry.PushDir(corpus("kube-green", "0.7.1"), "export/kube-green:0.7.1")
		Expect(err).NotTo(HaveOccurred())
		repo := env.Registry.Host + "/exported/kube-green"
		out := renderPackage(registryBD("export-kube-green", ref, ns), "--push", repo)
		Expect(out).To(ContainSubstring("# note: export-kube-green: the converted objects hold Secrets"))
		pkg := installExport(ctx, out, "export-kube-green")
		Expect(pkg.Spec.Template.Spec.Fetch[0].ImgpkgBundle.Image).To(HavePrefix(repo + "@sha256:"))
		vwc := &unstructured.Unstructured{}
		vwc.SetAPIVersion("admissionregistration.k8s.io/v1")
		vwc.SetKind("ValidatingWebhookConfiguration")
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "vsleepinfo.kb.io"}, vwc)).To(Succeed())
	})

	It("prints the installer account with --installer-rbac, for a namespace without rukpak-kapp", func(ctx context.Context) {
		const ns = "export-elsewhere"
		createNamespace(ctx, ns)
		ref, _, err := env.Registry.PushDir(filepath.Join(env.Root, "examples", "bundles", "plain-hello"), "export/plain-hello:v1")
		Expect(err).NotTo(HaveOccurred())
		bd := plainBD("export-rbac", rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: ref}})
		bd.Annotations = map[string]string{rukpakv1alpha2.AnnotationServiceAccount: "export-installer"}
		out := renderPackage(bd, "--namespace", ns, "--installer-rbac")
		objs, err := harness.DecodeYAML([]byte(out))
		Expect(err).NotTo(HaveOccurred())
		Expect(objs[0].GetKind()).To(Equal("ServiceAccount"))
		Expect(objs[0].GetName()).To(Equal("export-installer"))
		applyExport(ctx, out)
		waitInstalled(ctx, ns, "export-rbac")
		expectPlainHello(ctx, "export-rbac")
	})
})

// renderPackage runs `rukpak-kapp render --as-package -f` on bd as a user
// would and returns what it prints.
func renderPackage(bd *rukpakv1alpha2.BundleDeployment, args ...string) string {
	data, err := yaml.Marshal(bd)
	Expect(err).NotTo(HaveOccurred())
	file := filepath.Join(GinkgoT().TempDir(), "bd.yaml")
	Expect(os.WriteFile(file, data, 0o644)).To(Succeed())
	cmd := exec.Command(rukpakKapp, append([]string{"render", "--as-package", "-f", file}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "render --as-package: %s", stderr.String())
	return string(out)
}

// installExport applies the output as `kubectl apply -f` would, waits for
// the PackageInstall to succeed and returns the Package, read back through
// the aggregated API. The PackageInstall, and with it everything it
// installed, is deleted when the spec ends.
func installExport(ctx context.Context, out, name string) *datav1alpha1.Package {
	applyExport(ctx, out)
	waitInstalled(ctx, pkgNamespace, name)
	pi := &packagingv1alpha1.PackageInstall{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: pkgNamespace, Name: name}, pi)).To(Succeed())
	pkg := &datav1alpha1.Package{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: pkgNamespace, Name: pi.Spec.PackageRef.RefName + "." + pi.Status.Version}, pkg)).To(Succeed())
	app := &kappctrlv1alpha1.App{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: pkgNamespace, Name: name}, app)).To(Succeed())
	Expect(app.Annotations).To(HaveKeyWithValue("packaging.carvel.dev/package-version", pkg.Spec.Version), "the App is the PackageInstall's")
	return pkg
}

func applyExport(ctx context.Context, out string) {
	objs, err := harness.DecodeYAML([]byte(out))
	Expect(err).NotTo(HaveOccurred())
	for _, u := range objs {
		Expect(env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("kubectl"))).To(Succeed(), "apply %s %s", u.GetKind(), u.GetName())
		if u.GetKind() == "PackageInstall" {
			DeferCleanup(uninstall, u.GetNamespace(), u.GetName())
		}
	}
}

// waitInstalled waits for the PackageInstall's generation to be reconciled
// and stops at a failure (harness.Reconciled).
func waitInstalled(ctx context.Context, ns, name string) {
	EventuallyWithOffset(1, func() error {
		pi := &packagingv1alpha1.PackageInstall{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pi); err != nil {
			return err
		}
		done, err := harness.Reconciled(pi.Generation, pi.Status.GenericStatus)
		if err != nil {
			StopTrying(fmt.Sprintf("PackageInstall %s failed: %v", name, err)).Now()
		}
		if !done {
			return fmt.Errorf("PackageInstall %s at generation %d: %+v", name, pi.Generation, pi.Status.GenericStatus)
		}
		return nil
	}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
}

// uninstall deletes a PackageInstall and waits until kapp-controller has
// removed its App and what that installed.
func uninstall(ctx context.Context, ns, name string) {
	pi := &packagingv1alpha1.PackageInstall{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	Expect(client.IgnoreNotFound(env.Client.Delete(ctx, pi))).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(pi), pi))
	}).WithContext(ctx).Should(BeTrue(), "PackageInstall %s was not deleted", name)
}

// expectPlainHello checks what examples/bundles/plain-hello installs, with
// the owner labels of the BundleDeployment it was exported from.
func expectPlainHello(ctx context.Context, bdName string) {
	cm := &corev1.ConfigMap{}
	ExpectWithOffset(1, env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "hello-settings"}, cm)).To(Succeed())
	ExpectWithOffset(1, cm.Data).To(HaveKeyWithValue("greeting", "hello from a plain bundle"))
	ExpectWithOffset(1, cm.Labels).To(HaveKeyWithValue(rukpakv1alpha2.LabelOwnerName, bdName))
	ExpectWithOffset(1, env.Client.Get(ctx, client.ObjectKey{Name: "greetings.example.rukpak-kapp.dev"}, &apiextensionsv1.CustomResourceDefinition{})).To(Succeed())
}

func plainBD(name string, src rukpakv1alpha2.BundleSource) *rukpakv1alpha2.BundleDeployment {
	return &rukpakv1alpha2.BundleDeployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: rukpakv1alpha2.GroupVersion.String(), Kind: "BundleDeployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       rukpakv1alpha2.BundleDeploymentSpec{InstallNamespace: "default", ProvisionerClassName: rukpakv1alpha2.ClassPlain, Source: src},
	}
}

func helmBD(name, url, values string) *rukpakv1alpha2.BundleDeployment {
	bd := plainBD(name, rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP, HTTP: &rukpakv1alpha2.HTTPSource{URL: url}})
	bd.Spec.ProvisionerClassName = rukpakv1alpha2.ClassHelm
	if values != "" {
		raw, err := yaml.YAMLToJSON([]byte("values: |\n  " + strings.ReplaceAll(strings.TrimSuffix(values, "\n"), "\n", "\n  ") + "\n"))
		Expect(err).NotTo(HaveOccurred())
		bd.Spec.Config = &apiextensionsv1.JSON{Raw: raw}
	}
	return bd
}

func registryBD(name, ref, ns string) *rukpakv1alpha2.BundleDeployment {
	bd := plainBD(name, rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: ref}})
	bd.Spec.ProvisionerClassName = rukpakv1alpha2.ClassRegistry
	bd.Spec.InstallNamespace = ns
	return bd
}

// serveChart serves examples/charts as a .tgz, the chart in its single
// top-level directory as `helm package` makes it, and returns its URL.
func serveChart() string {
	tgz, err := harness.TarGz(filepath.Join(env.Root, "examples", "charts"))
	Expect(err).NotTo(HaveOccurred())
	return env.Files.Put("/charts/hello-world-0.1.0.tgz", tgz)
}

func corpus(bundle, version string) string {
	return filepath.Join(env.Root, "test", "testdata", "registry-v1-corpus", bundle, version)
}

func createNamespace(ctx context.Context, ns string) {
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	Expect(env.Client.Create(ctx, namespace)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, namespace) })
}
