package packaging_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"slices"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// operator-controller v0.9.0's own test catalog: package prometheus, channel
// beta 1.0.0 → 1.0.1 → 1.2.0 → 2.0.0 by replaces (alpha holds 1.0.0 alone),
// and a plain+v0 package. Published with `rukpak-kapp catalog push`, added
// and installed through kapp-controller's packaging API exactly as kctrl
// v0.53.1 drives it (the harness's Kctrl* functions name the command each
// stands for).
var _ = Describe("an OLM catalog as Carvel packages", func() {
	It("lists the catalog's channels, installs a bundle through rukpak-kapp, walks the channel to its head keeping every object, refuses a move with no path and uninstalls", func(ctx context.Context) {
		const ns, install, installNS = "catalog-test", "prom", "catalog-prom-op"
		ref := "beta.prometheus." + catalog.DefaultDomain
		bdName := install + "." + ns
		catalogsAPI(ctx)
		createNamespace(ctx, ns)

		By("relocating the catalog's bundle images to the test registry, as a mirror would, and pushing it as a package repository")
		dir := relocatedCatalog(ctx)
		// Only the bundle images are relocated here (the operators' own are
		// on registries this machine cannot reach), so only they are locked;
		// the air-gap suite locks both.
		cmd := exec.CommandContext(ctx, rukpakKapp, "catalog", "push", "--catalog", dir, "--repository", env.Registry.Host+"/catalog/repository", "--tag", "v1", "--operator-images=false")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		Expect(err).NotTo(HaveOccurred(), "catalog push: %s", stderr.String())
		pinned := strings.TrimSpace(string(out))
		Expect(pinned).To(HavePrefix(env.Registry.Host + "/catalog/repository@sha256:"))

		By("kctrl package repository add -r operators --url " + pinned)
		Expect(harness.KctrlRepositoryAdd(ctx, env.ControlPlane.Config, ns, "operators", pinned)).To(Succeed())

		By("kctrl package available list; kctrl package available list -p " + ref)
		summaries, err := harness.KctrlAvailableList(ctx, env.ControlPlane.Config, ns)
		Expect(err).NotTo(HaveOccurred())
		Expect(summaries).To(ConsistOf(
			harness.PackageSummary{Namespace: ns, Name: "alpha.prometheus." + catalog.DefaultDomain, DisplayName: "prometheus, channel alpha"},
			harness.PackageSummary{Namespace: ns, Name: ref, DisplayName: "prometheus, channel beta (default)"},
			harness.PackageSummary{Namespace: ns, Name: "beta.plain." + catalog.DefaultDomain, DisplayName: "plain, channel beta (default)"},
		))
		versions, err := harness.KctrlAvailableVersions(ctx, env.ControlPlane.Config, ns, ref)
		Expect(err).NotTo(HaveOccurred())
		Expect(versions).To(ConsistOf(
			harness.AvailablePackage{Namespace: ns, Name: ref, Version: "1.0.0"}, harness.AvailablePackage{Namespace: ns, Name: ref, Version: "1.0.1"},
			harness.AvailablePackage{Namespace: ns, Name: ref, Version: "1.2.0"}, harness.AvailablePackage{Namespace: ns, Name: ref, Version: "2.0.0"},
		))

		By("kctrl package install -i prom -p " + ref + " --version 1.0.0 --values-file (installNamespace)")
		DeferCleanup(func(ctx context.Context) {
			Expect(harness.KctrlInstalledDelete(ctx, env.ControlPlane.Config, ns, install)).To(Succeed())
		})
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlPackageInstall(ctx, env.ControlPlane.Config, harness.KctrlInstall{Namespace: ns, Name: install, Package: ref, Version: "1.0.0",
				Values: []byte("installNamespace: " + installNS + "\n")})
		})).To(Succeed())
		bd := &rukpakv1alpha2.BundleDeployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		Expect(bd.Spec.ProvisionerClassName).To(Equal(rukpakv1alpha2.ClassRegistry))
		Expect(bd.Spec.InstallNamespace).To(Equal(installNS))
		Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "prometheus-operator.1.0.0"))
		Expect(installedAt(bd)).To(BeTrue(), "the PackageInstall succeeded only once the adapter installed the BundleDeployment: %+v", bd.Status.Conditions)
		before := catalogUIDs(ctx, bdName, installNS)

		By("the pinned install says what its channel offers: kubectl get operatorinstall, an Event on the PackageInstall, the adapter's gauge")
		offered := "Channel beta offers 2.0.0 beyond 1.0.0, the version installed, along 1.0.0 → 1.0.1 → 1.2.0 → 2.0.0. " +
			"See what each hop changes with: rukpak-kapp upgrade plan " + install + " -n " + ns + " --to 2.0.0; " +
			"install it with: kctrl package installed update -n " + ns + " -i " + install + " --version 2.0.0"
		Eventually(upgradeNotice).WithContext(ctx).WithArguments(ns, install).Should(Equal("True UpgradeAvailable " + offered))
		Eventually(noticesOn).WithContext(ctx).WithArguments(ns, install).Should(Equal([]string{offered}))
		gauge := `operatorinstall="` + install + `"`
		Eventually(adapterMetric).WithContext(ctx).WithArguments("rukpak_kapp_catalog_upgrade_available", gauge).Should(Equal(1.0))

		By("kctrl package installed update -i prom --values-file (watchNamespaces: its own namespace, then another): OwnNamespace, then SingleNamespace")
		createNamespace(ctx, "catalog-watched")
		for _, watched := range []string{installNS, "catalog-watched"} {
			Expect(kctrl(ctx, func(ctx context.Context) error {
				return harness.KctrlInstalledUpdateValues(ctx, env.ControlPlane.Config, ns, install,
					[]byte("installNamespace: "+installNS+"\nwatchNamespaces: ["+watched+"]\n"))
			})).To(Succeed(), "watching %s", watched)
			Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
			Expect(installedAt(bd)).To(BeTrue(), "%+v", bd.Status.Conditions)
			deployment := &appsv1.Deployment{}
			Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: installNS, Name: "prometheus-operator"}, deployment)).To(Succeed())
			Expect(deployment.Spec.Template.Annotations).To(HaveKeyWithValue("olm.targetNamespaces", watched))
		}
		Expect(catalogUIDs(ctx, bdName, installNS)).To(Equal(before), "new values recreate nothing")

		By("kctrl package installed update -i prom --version '>= 0.0.0' (following the channel): its head 2.0.0 is three edges away; rukpak-kapp walks 1.0.0 → 1.0.1 → 1.2.0 → 2.0.0")
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlInstalledUpdate(ctx, env.ControlPlane.Config, ns, install, ">= 0.0.0")
		})).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "prometheus-operator.2.0.0"))
		tagged, err := name.NewTag(env.Registry.Host+"/catalog/prometheus-operator:v2.0.0", name.Insecure)
		Expect(err).NotTo(HaveOccurred())
		head, err := remote.Head(tagged, remote.WithContext(ctx))
		Expect(err).NotTo(HaveOccurred())
		Expect(bd.Spec.Source.Image.Ref).To(Equal(env.Registry.Host+"/catalog/prometheus-operator@"+head.Digest.String()), "kbld pinned the bundle to the digest the push locked")
		Expect(installedAt(bd)).To(BeTrue(), "the PackageInstall succeeded only once the walk ended: %+v", bd.Status.Conditions)
		Expect(installIsInstalled(ctx, ns, install)).To(BeTrue(), "%+v", operatorInstall(ctx, ns, install).Status.Conditions)
		Expect(installCondition(ctx, ns, install, catalogsv1alpha1.TypeInstalled).Message).To(
			ContainSubstring("upgraded along channel beta one edge at a time: 1.0.0 → 1.0.1 → 1.2.0 → 2.0.0"))
		Expect(installCondition(ctx, ns, install, catalogsv1alpha1.TypeProgressing)).To(BeNil(), "the walk ended")
		Eventually(upgradeNotice).WithContext(ctx).WithArguments(ns, install).Should(Equal("False AtChannelHead 2.0.0, the version installed, is the head of channel beta"))
		Eventually(adapterMetric).WithContext(ctx).WithArguments("rukpak_kapp_catalog_upgrade_available", gauge).Should(Equal(0.0))
		Expect(catalogUIDs(ctx, bdName, installNS)).To(Equal(before), "each step upgrades in place: nothing recreated")
		Eventually(upgradeSteps).WithContext(ctx).WithArguments(ns, install).Should(Equal([]string{
			"Upgrading along channel beta (1.0.0 → 1.0.1 → 1.2.0 → 2.0.0): installing 1.0.1, step 1 of 3",
			"Upgrading along channel beta (1.0.0 → 1.0.1 → 1.2.0 → 2.0.0): installing 1.2.0, step 2 of 3",
			"Upgrading along channel beta (1.0.0 → 1.0.1 → 1.2.0 → 2.0.0): installing 2.0.0, step 3 of 3",
		}), "each step is recorded, in order")
		upgraded := bd.Generation

		By("kubectl annotate packageinstall prom packaging.carvel.dev/downgradable=\"\"; kctrl package installed update -i prom --version 1.0.1: no path leads back, refused, nothing changed")
		pi := &packagingv1alpha1.PackageInstall{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: install}, pi)).To(Succeed())
		patch := client.MergeFrom(pi.DeepCopy())
		pi.Annotations["packaging.carvel.dev/downgradable"] = ""
		Expect(env.Client.Patch(ctx, pi, patch)).To(Succeed())
		err = kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlInstalledUpdate(ctx, env.ControlPlane.Config, ns, install, "1.0.1")
		})
		Expect(err).To(HaveOccurred())
		// kapp wraps long lines of the API server's answer.
		Expect(strings.Join(strings.Fields(err.Error()), " ")).To(And(
			ContainSubstring("Installed == False: UpgradeRefused"),
			ContainSubstring("version 2.0.0 is installed and 1.0.1 was asked for"),
			ContainSubstring("does not reach from 2.0.0, in one edge or along a path of its published versions"),
			ContainSubstring("set the value upgradeConstraintPolicy: SelfCertified")))
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		Expect(bd.Generation).To(Equal(upgraded), "the refused move changed nothing")
		Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "prometheus-operator.2.0.0"))
		Expect(catalogUIDs(ctx, bdName, installNS)).To(Equal(before))

		By("kubectl edit bundledeployment: its image moved by hand is refused: the OperatorInstall writes it")
		edited := bd.DeepCopy()
		edited.Spec.Source.Image.Ref = env.Registry.Host + "/catalog/prometheus-operator:v1.0.1"
		editErr := env.Client.Update(ctx, edited, client.FieldOwner("kubectl-edit"))
		Expect(editErr).To(HaveOccurred())
		Expect(editErr.Error()).To(And(ContainSubstring(`admission webhook "operatorinstall-ownership.core.rukpak.io" denied the request`),
			ContainSubstring("BundleDeployment "+bdName+" is written by OperatorInstall "+ns+"/"+install+": its bundle, its catalog entry and its values change through it"),
			ContainSubstring("kctrl package installed update -n "+ns+" -i "+install)))
		By("kubectl annotate bundledeployment: the catalog entry it names changed by hand is refused as well")
		edited = bd.DeepCopy()
		edited.Annotations[catalog.AnnotationBundle], edited.Annotations[catalog.AnnotationVersion] = "prometheus-operator.1.0.1", "1.0.1"
		editErr = env.Client.Update(ctx, edited, client.FieldOwner("kubectl-annotate"))
		Expect(editErr).To(HaveOccurred())
		Expect(editErr.Error()).To(ContainSubstring(`admission webhook "operatorinstall-ownership.core.rukpak.io" denied the request`))
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		Expect(bd.Generation).To(Equal(upgraded))
		Expect(installedVersion(ctx, ns, install)).To(Equal("2.0.0"))

		By("kctrl package installed update -i prom --version 2.0.0: pinned to what is installed")
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlInstalledUpdate(ctx, env.ControlPlane.Config, ns, install, "2.0.0")
		})).To(Succeed())

		By("a new catalog version (2.1.0 replaces 2.0.0; channel alpha and 1.0.0 dropped), pushed with --previous; kctrl package repository update")
		next := nextCatalog(ctx, dir)
		cmd = exec.CommandContext(ctx, rukpakKapp, "catalog", "push", "--catalog", next, "--repository", env.Registry.Host+"/catalog/repository", "--tag", "v2", "--previous", pinned, "--operator-images=false")
		stderr.Reset()
		cmd.Stderr = &stderr
		out, err = cmd.Output()
		Expect(err).NotTo(HaveOccurred(), "catalog push: %s", stderr.String())
		Expect(stderr.String()).To(ContainSubstring("kept 3 Packages and PackageMetadatas of " + pinned))
		Expect(harness.KctrlRepositoryUpdate(ctx, env.ControlPlane.Config, ns, "operators", strings.TrimSpace(string(out)))).To(Succeed())
		versions, err = harness.KctrlAvailableVersions(ctx, env.ControlPlane.Config, ns, ref)
		Expect(err).NotTo(HaveOccurred())
		Expect(versions).To(HaveLen(5), "no Package withdrawn, 2.1.0 added: %v", versions)
		dropped := &datav1alpha1.Package{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref + ".1.0.0"}, dropped)).To(Succeed())
		Expect(dropped.Annotations).To(HaveKeyWithValue(catalog.AnnotationRetracted, env.Registry.Host+"/catalog/repository:v2"),
			"a Package kept from the previous repository is marked retracted: nothing moves to it")
		By("the pinned install's notice names 2.1.0 within seconds of the repository's update, with an Event on the PackageInstall")
		// The watch of the catalog's Packages wakes the install: no timer
		// would bring it within this bound.
		offered = "Channel beta offers 2.1.0 beyond 2.0.0, the version installed. See what each hop changes with: rukpak-kapp upgrade plan " + install + " -n " + ns +
			" --to 2.1.0; install it with: kctrl package installed update -n " + ns + " -i " + install + " --version 2.1.0"
		Eventually(upgradeNotice).WithContext(ctx).WithArguments(ns, install).WithTimeout(15 * time.Second).Should(Equal("True UpgradeAvailable " + offered))
		Eventually(noticesOn).WithContext(ctx).WithArguments(ns, install).Should(ContainElement(offered))
		Eventually(adapterMetric).WithContext(ctx).WithArguments("rukpak_kapp_catalog_upgrade_available", gauge).Should(Equal(1.0))
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "prometheus-operator.2.0.0"), "a notice installs nothing")

		By("kctrl package installed update -i prom --version '>= 0.0.0': following the channel, kapp-controller moves the install to 2.1.0, along the new edge")
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlInstalledUpdate(ctx, env.ControlPlane.Config, ns, install, ">= 0.0.0")
		})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
			g.Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "prometheus-operator.2.1.0"))
			g.Expect(installedAt(bd)).To(BeTrue(), "%+v", bd.Status.Conditions)
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		Expect(catalogUIDs(ctx, bdName, installNS)).To(Equal(before))
		Eventually(upgradeNotice).WithContext(ctx).WithArguments(ns, install).Should(Equal("False AtChannelHead 2.1.0, the version installed, is the head of channel beta"))

		By("kctrl package installed delete -i prom: the OperatorInstall, its BundleDeployment and what it installed go; the namespace stays")
		Expect(harness.KctrlInstalledDelete(ctx, env.ControlPlane.Config, ns, install)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, &rukpakv1alpha2.BundleDeployment{}))
		}).WithContext(ctx).Should(BeTrue())
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: installNS, Name: "prometheus-operator"}, &appsv1.Deployment{}))).To(BeTrue())
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: "prometheuses.monitoring.coreos.com"}, &apiextensionsv1.CustomResourceDefinition{}))).To(BeTrue())
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: installNS}, &corev1.Namespace{})).To(Succeed())
	}, SpecTimeout(8*time.Minute))

	It("follows a catalog image with an OperatorCatalog: published in its namespace, published again when its tag moves, forward and back, what the catalog dropped withdrawn, all withdrawn with it", func(ctx context.Context) {
		const ns = "catalog-follow"
		ref := "beta.prometheus." + catalog.DefaultDomain
		catalogsAPI(ctx)
		createNamespace(ctx, ns)
		dir := relocatedCatalog(ctx)
		image := pushCatalogImage(dir, "catalog/index:latest")
		cat := newCatalog(ctx, ns, "operators", image)
		first := published(ctx, cat, "")
		Expect(kctrlVersions(ctx, ns, ref)).To(ConsistOf("1.0.0", "1.0.1", "1.2.0", "2.0.0"))
		summaries, err := harness.KctrlAvailableList(ctx, env.ControlPlane.Config, ns)
		Expect(err).NotTo(HaveOccurred())
		Expect(summaries).To(HaveLen(3))

		By("the tag moved to the next catalog version: published again; 1.0.0 and channel alpha, which it dropped and nothing installs, withdrawn")
		pushCatalogImage(nextCatalog(ctx, dir), "catalog/index:latest")
		second := published(ctx, cat, first)
		Eventually(kctrlVersions).WithContext(ctx).WithArguments(ns, ref).Should(ConsistOf("1.0.1", "1.2.0", "2.0.0", "2.1.0"))
		summaries, err = harness.KctrlAvailableList(ctx, env.ControlPlane.Config, ns)
		Expect(err).NotTo(HaveOccurred())
		Expect(summaries).To(HaveLen(2), "channel alpha's PackageMetadata went with its last Package: %v", summaries)

		By("the tag moved back: 2.1.0 withdrawn, 1.0.0 and channel alpha published again")
		pushCatalogImage(dir, "catalog/index:latest")
		published(ctx, cat, second)
		Eventually(kctrlVersions).WithContext(ctx).WithArguments(ns, ref).Should(ConsistOf("1.0.0", "1.0.1", "1.2.0", "2.0.0"))
		summaries, err = harness.KctrlAvailableList(ctx, env.ControlPlane.Config, ns)
		Expect(err).NotTo(HaveOccurred())
		Expect(summaries).To(HaveLen(3))

		By("deleting the OperatorCatalog withdraws what it published")
		Expect(env.Client.Delete(ctx, cat)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(cat), cat))).To(BeTrue())
			summaries, err := harness.KctrlAvailableList(ctx, env.ControlPlane.Config, ns)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(summaries).To(BeEmpty())
			g.Expect(kctrlVersions(ctx, ns, ref)).To(BeEmpty())
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	}, SpecTimeout(4*time.Minute))
})

// published waits until cat reports Published for its generation with a
// digest other than before, and returns that digest.
func published(ctx context.Context, cat *catalogsv1alpha1.OperatorCatalog, before string) string {
	var digest string
	EventuallyWithOffset(1, func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cat), cat)).To(Succeed())
		c := meta.FindStatusCondition(cat.Status.Conditions, catalogsv1alpha1.TypePublished)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
		g.Expect(c.ObservedGeneration).To(Equal(cat.Generation))
		g.Expect(cat.Status.ResolvedImage).NotTo(Equal(before))
		digest = cat.Status.ResolvedImage
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	return digest
}

func kctrlVersions(ctx context.Context, ns, ref string) []string {
	versions, err := harness.KctrlAvailableVersions(ctx, env.ControlPlane.Config, ns, ref)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	var out []string
	for _, v := range versions {
		out = append(out, v.Version)
	}
	return out
}

// relocatedCatalog pushes the test catalog's bundle images to the test
// registry and writes the catalog with its images relocated there, as a
// mirror relocates them; it returns the catalog's directory.
func relocatedCatalog(ctx context.Context) string {
	testdata, err := harness.OperatorControllerTestdata(ctx, env.Root)
	Expect(err).NotTo(HaveOccurred())
	// The test data has one bundle for every version; each version is its
	// own image here (a label of its version), as a real catalog's bundles
	// are: a move is a change of the image, which the push pins by digest.
	context := GinkgoT().TempDir()
	Expect(os.CopyFS(context, os.DirFS(filepath.Join(testdata, "bundles", "registry-v1", "prometheus-operator.v1.0.0")))).To(Succeed())
	dockerfile, err := os.ReadFile(filepath.Join(context, "Dockerfile"))
	Expect(err).NotTo(HaveOccurred())
	for _, tag := range []string{"v1.0.0", "v1.0.1", "v1.2.0", "v2.0.0", "v2.1.0"} {
		Expect(os.WriteFile(filepath.Join(context, "Dockerfile."+tag), append(slices.Clone(dockerfile), "\nLABEL rukpak-kapp.test/version="+tag+"\n"...), 0o644)).To(Succeed())
		_, _, err := env.Registry.PushDockerfile(context, "Dockerfile."+tag, "catalog/prometheus-operator:"+tag)
		Expect(err).NotTo(HaveOccurred())
	}
	_, _, err = env.Registry.PushDockerContext(filepath.Join(testdata, "bundles", "plain-v0", "plain.v0.1.0"), "catalog/plain:v0.1.0")
	Expect(err).NotTo(HaveOccurred())
	fbc, err := os.ReadFile(filepath.Join(testdata, "catalogs", "test-catalog", "catalog.yaml"))
	Expect(err).NotTo(HaveOccurred())
	relocated := strings.NewReplacer(
		"localhost/testdata/bundles/registry-v1/prometheus-operator:", env.Registry.Host+"/catalog/prometheus-operator:",
		"localhost/testdata/bundles/plain-v0/plain:", env.Registry.Host+"/catalog/plain:").Replace(string(fbc))
	dir := GinkgoT().TempDir()
	Expect(os.WriteFile(filepath.Join(dir, "catalog.yaml"), []byte(relocated), 0o644)).To(Succeed())
	return dir
}

// pushCatalogImage pushes the catalog in dir as opm lays out a catalog
// image: under /configs, labelled.
func pushCatalogImage(dir, repoTag string) string {
	build := GinkgoT().TempDir()
	Expect(os.CopyFS(filepath.Join(build, "catalog"), os.DirFS(dir))).To(Succeed())
	Expect(os.WriteFile(filepath.Join(build, "Dockerfile"), []byte("FROM scratch\nADD catalog /configs\nLABEL operators.operatorframework.io.index.configs.v1=/configs\n"), 0o644)).To(Succeed())
	ref, _, err := env.Registry.PushDockerContext(build, repoTag)
	Expect(err).NotTo(HaveOccurred())
	return ref
}

// nextCatalog writes the next version of the relocated catalog in dir, as
// its authors would publish it: bundle 2.1.0 replaces 2.0.0 in channel
// beta, channel alpha and bundle 1.0.0 are gone.
func nextCatalog(ctx context.Context, dir string) string {
	cfg, err := declcfg.LoadFS(ctx, os.DirFS(dir))
	Expect(err).NotTo(HaveOccurred())
	next := &declcfg.DeclarativeConfig{Packages: cfg.Packages}
	for _, ch := range cfg.Channels {
		if ch.Package == "prometheus" && ch.Name == "alpha" {
			continue
		}
		if ch.Package == "prometheus" {
			ch.Entries = slices.DeleteFunc(ch.Entries, func(e declcfg.ChannelEntry) bool { return e.Name == "prometheus-operator.1.0.0" })
			for i := range ch.Entries {
				if ch.Entries[i].Replaces == "prometheus-operator.1.0.0" {
					ch.Entries[i].Replaces = ""
				}
			}
			ch.Entries = append(ch.Entries, declcfg.ChannelEntry{Name: "prometheus-operator.2.1.0", Replaces: "prometheus-operator.2.0.0"})
		}
		next.Channels = append(next.Channels, ch)
	}
	for _, b := range cfg.Bundles {
		switch b.Name {
		case "prometheus-operator.1.0.0":
			continue
		case "prometheus-operator.2.0.0":
			n := b
			n.Name = "prometheus-operator.2.1.0"
			n.Image = strings.Replace(b.Image, ":v2.0.0", ":v2.1.0", 1)
			n.Properties = []property.Property{property.MustBuildPackage("prometheus", "2.1.0")}
			next.Bundles = append(next.Bundles, n)
		}
		next.Bundles = append(next.Bundles, b)
	}
	out := GinkgoT().TempDir()
	f, err := os.Create(filepath.Join(out, "catalog.yaml"))
	Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	Expect(declcfg.WriteYAML(*next, f)).To(Succeed())
	return out
}

// noticesOn are the notes of the UpgradeAvailable Events regarding the
// PackageInstall ns/name, oldest first (what kubectl describe lists).
func noticesOn(ctx context.Context, ns, name string) ([]string, error) {
	return eventNotes(ctx, ns, "PackageInstall", name, catalogsv1alpha1.ReasonUpgradeAvailable)
}

// eventNotes are the notes of the Events of reason regarding the object
// kind ns/name, oldest first.
func eventNotes(ctx context.Context, ns, kind, name, reason string) ([]string, error) {
	list := &eventsv1.EventList{}
	if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	slices.SortFunc(list.Items, func(a, b eventsv1.Event) int { return a.EventTime.Compare(b.EventTime.Time) })
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Kind == kind && e.Regarding.Name == name && e.Reason == reason {
			out = append(out, e.Note)
		}
	}
	return out, nil
}

// kctrl runs one kctrl command's calls within the time kctrl's own wait
// would be given here.
func kctrl(ctx context.Context, run func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	return run(ctx)
}

// installedAt says the BundleDeployment's current generation is installed.
func installedAt(bd *rukpakv1alpha2.BundleDeployment) bool {
	for _, c := range bd.Status.Conditions {
		if c.Type == rukpakv1alpha2.TypeInstalled {
			return c.Status == "True" && c.ObservedGeneration == bd.Generation
		}
	}
	return false
}

// catalogUIDs are the UIDs of the BundleDeployment, the operator's
// Deployment, one of its CRDs and the install namespace.
func catalogUIDs(ctx context.Context, bdName, ns string) map[string]types.UID {
	return uidsOf(ctx, map[string]client.ObjectKey{
		"bd": {Name: bdName}, "deployment": {Namespace: ns, Name: "prometheus-operator"},
		"crd": {Name: "prometheuses.monitoring.coreos.com"}, "namespace": {Name: ns},
	})
}

// uidsOf are the UIDs of a BundleDeployment ("bd"), a Deployment
// ("deployment"), a CRD ("crd") and a Namespace ("namespace"), by key.
func uidsOf(ctx context.Context, keys map[string]client.ObjectKey) map[string]types.UID {
	out := map[string]types.UID{}
	for key, o := range map[string]client.Object{
		"bd":         &rukpakv1alpha2.BundleDeployment{},
		"deployment": &appsv1.Deployment{},
		"crd":        &apiextensionsv1.CustomResourceDefinition{},
		"namespace":  &corev1.Namespace{},
	} {
		ExpectWithOffset(2, env.Client.Get(ctx, keys[key], o)).To(Succeed(), "%s %s", key, keys[key])
		out[key] = o.GetUID()
	}
	return out
}
