package packaging_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	gomegatypes "github.com/onsi/gomega/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// serveTimeout bounds each wait more tightly than the suite's default:
// installs of these small bundles take seconds.
const serveTimeout = time.Minute

// The suite's adapter runs with --install-with=packageinstall.
var _ = Describe("the serve mode", func() {
	It("installs a plain bundle through a PackageInstall, upgrades it, reports a failed upgrade and a fetch failure, and removes everything on delete", func(ctx context.Context) {
		const name, ns = "serve-plain", "serve-plain"
		createNamespace(ctx, ns)
		bd := plainBD(name, imageSource(pushPlain("serve/plain:v1", "one", "")))
		bd.Spec.InstallNamespace = ns
		Expect(env.Client.Create(ctx, bd)).To(Succeed())
		DeferCleanup(deleteBD, name)

		installed := waitCondition(ctx, name, 1, rukpakv1alpha2.TypeInstalled, metav1.ConditionTrue, rukpakv1alpha2.ReasonInstallationSucceeded)
		pi, app := expectServed(ctx, name)
		v1 := pi.Status.Version
		Expect(v1).To(MatchRegexp(`^0\.0\.0-sha256-[0-9a-f]{16}$`), "a plain bundle without the annotation has a content version")
		Expect(installed.Message).To(Equal(fmt.Sprintf("Instantiated bundle %s: version %s of Package %s.bundles.rukpak-kapp.dev through PackageInstall %s/%s", name, v1, name, harness.SystemNamespace, name)))
		Expect(app.Annotations).To(HaveKeyWithValue("packaging.carvel.dev/package-version", v1))
		expectGreeting(ctx, ns, "one", name)

		By("listing it as kctrl package available list / installed list do")
		summaries, err := harness.KctrlAvailableList(ctx, env.ControlPlane.Config, harness.SystemNamespace)
		Expect(err).NotTo(HaveOccurred())
		Expect(summaries).To(ContainElement(harness.PackageSummary{Namespace: harness.SystemNamespace, Name: name + ".bundles.rukpak-kapp.dev",
			DisplayName: name, ShortDescription: "Bundle " + name}))
		Expect(packageVersions(ctx, name)).To(Equal([]string{v1}))
		listed, err := harness.KctrlInstalledList(ctx, env.ControlPlane.Config, harness.SystemNamespace)
		Expect(err).NotTo(HaveOccurred())
		Expect(listed).To(ContainElement(And(HaveField("Name", name), HaveField("PackageName", name+".bundles.rukpak-kapp.dev"),
			HaveField("PackageVersion", v1), HaveField("Status", "Reconcile succeeded"))))

		By("upgrading to new content: a new Package version, the PackageInstall upgraded, the old Package removed")
		setImage(ctx, name, pushPlain("serve/plain:v2", "two", ""))
		waitCondition(ctx, name, 2, rukpakv1alpha2.TypeInstalled, metav1.ConditionTrue, rukpakv1alpha2.ReasonInstallationSucceeded)
		// The generation rule: Installed=True at generation 2 means
		// generation 2's content is deployed, at once.
		expectGreeting(ctx, ns, "two", name)
		pi, _ = expectServed(ctx, name)
		v2 := pi.Status.Version
		Expect(v2).NotTo(Equal(v1))
		Eventually(func() ([]string, error) { return packageVersions(ctx, name) }).WithContext(ctx).WithTimeout(serveTimeout).Should(Equal([]string{v2}))

		By("failing an upgrade whose manifests do not parse: UpgradeFailed, what is installed stays")
		setImage(ctx, name, pushPlain("serve/plain:broken", "three", "kind: ConfigMap\nmetadata: [\n"))
		failed := waitCondition(ctx, name, 3, rukpakv1alpha2.TypeInstalled, metav1.ConditionFalse, rukpakv1alpha2.ReasonUpgradeFailed)
		Expect(failed.Message).To(ContainSubstring("invalid bundle"))
		expectGreeting(ctx, ns, "two", name)

		By("failing to fetch: Unpacked says so")
		setImage(ctx, name, env.Registry.Host+"/serve/plain:missing")
		unpacked := waitCondition(ctx, name, 4, rukpakv1alpha2.TypeUnpacked, metav1.ConditionFalse, rukpakv1alpha2.ReasonUnpackFailed)
		Expect(unpacked.Message).To(ContainSubstring("serve/plain:missing"))

		By("deleting the BundleDeployment: the PackageInstall, its App, everything installed and every published object go")
		deleteBD(ctx, name)
		expectGone(ctx, &packagingv1alpha1.PackageInstall{ObjectMeta: metav1.ObjectMeta{Namespace: harness.SystemNamespace, Name: name}})
		expectGone(ctx, &kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Namespace: harness.SystemNamespace, Name: name}})
		expectGone(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello-settings"}})
		expectGone(ctx, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "greetings.example.rukpak-kapp.dev"}})
		expectGone(ctx, &datav1alpha1.PackageMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: harness.SystemNamespace, Name: name + ".bundles.rukpak-kapp.dev"}})
		Expect(packageVersions(ctx, name)).To(BeEmpty())
	})

	It("installs a helm chart with values through a PackageInstall at its chart version, and a values change through a new values Secret", func(ctx context.Context) {
		const name, ns = "serve-helm", "serve-helm"
		createNamespace(ctx, ns)
		bd := helmBD(name, serveChart(), "replicaCount: 2\n")
		bd.Spec.InstallNamespace = ns
		Expect(env.Client.Create(ctx, bd)).To(Succeed())
		DeferCleanup(deleteBD, name)

		waitCondition(ctx, name, 1, rukpakv1alpha2.TypeInstalled, metav1.ConditionTrue, rukpakv1alpha2.ReasonInstallationSucceeded)
		pi, _ := expectServed(ctx, name)
		Expect(pi.Status.Version).To(Equal("0.1.0"))
		Expect(pi.Spec.Values).To(HaveLen(1))
		firstValues := pi.Spec.Values[0].SecretRef.Name
		Expect(firstValues).To(HavePrefix(name + "-values-"))
		expectReplicas(ctx, ns, name+"-hello-world", 2)

		By("changing the values: the same Package, new values, deployed before Installed=True moves to generation 2")
		bd = &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: name}}
		Expect(harness.Edit(ctx, env.Client, bd, func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Spec.Config = helmBD(name, "", "replicaCount: 3\n").Spec.Config
		})).To(Succeed())
		waitCondition(ctx, name, 2, rukpakv1alpha2.TypeInstalled, metav1.ConditionTrue, rukpakv1alpha2.ReasonInstallationSucceeded)
		expectReplicas(ctx, ns, name+"-hello-world", 3)
		pi, _ = expectServed(ctx, name)
		Expect(pi.Status.Version).To(Equal("0.1.0"))
		Expect(packageVersions(ctx, name)).To(Equal([]string{"0.1.0"}))
		expectGone(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: harness.SystemNamespace, Name: firstValues}})

		By("deleting it: the chart's crds/ stay, as Helm keeps them, though kapp removed everything else")
		crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "greetings.hello.rukpak-kapp.test"}}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(crd), crd)).To(Succeed())
		Expect(crd.Labels).NotTo(HaveKey("kapp.k14s.io/app"), "no App owns a chart's CRD")
		deleteBD(ctx, name)
		expectGone(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-hello-world"}})
		kept := &apiextensionsv1.CustomResourceDefinition{}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(crd), kept)).To(Succeed())
		Expect(kept.UID).To(Equal(crd.UID))
	})

	It("installs a registry+v1 bundle for its own namespace through a PackageInstall at its CSV's version", func(ctx context.Context) {
		const name, ns = "serve-dvo", "serve-dvo"
		createNamespace(ctx, ns)
		ref, _, err := env.Registry.PushDir(corpus("deployment-validation-operator", "0.7.12"), "serve/dvo:0.7.12")
		Expect(err).NotTo(HaveOccurred())
		bd := registryBD(name, ref, ns)
		bd.Spec.Config = &apiextensionsv1.JSON{Raw: []byte(`{"watchNamespaces":["` + ns + `"]}`)}
		Expect(env.Client.Create(ctx, bd)).To(Succeed())
		DeferCleanup(deleteBD, name)

		waitCondition(ctx, name, 1, rukpakv1alpha2.TypeInstalled, metav1.ConditionTrue, rukpakv1alpha2.ReasonInstallationSucceeded)
		pi, _ := expectServed(ctx, name)
		Expect(pi.Status.Version).To(Equal("0.7.12"))
		deps := &appsv1.DeploymentList{}
		Expect(env.Client.List(ctx, deps, client.InNamespace(ns))).To(Succeed())
		Expect(deps.Items).To(HaveLen(1))
		Expect(deps.Items[0].Spec.Template.Annotations).To(HaveKeyWithValue("olm.targetNamespaces", ns))
	})

	It("switches one BundleDeployment App → PackageInstall → App, keeping every installed object", func(ctx context.Context) {
		const name, ns = "serve-switch", "serve-switch"
		createNamespace(ctx, ns)
		bd := plainBD(name, imageSource(pushPlain("serve/switch:v1", "switch", "")))
		bd.Spec.InstallNamespace = ns
		bd.Annotations = map[string]string{rukpakv1alpha2.AnnotationInstallWith: "app"}
		Expect(env.Client.Create(ctx, bd)).To(Succeed())
		DeferCleanup(deleteBD, name)

		waitCondition(ctx, name, 1, rukpakv1alpha2.TypeInstalled, metav1.ConditionTrue, rukpakv1alpha2.ReasonInstallationSucceeded)
		app := &kappctrlv1alpha1.App{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: name}, app)).To(Succeed())
		Expect(metav1.GetControllerOf(app).Kind).To(Equal(rukpakv1alpha2.OwnerKind), "the App mode's App is the BundleDeployment's")
		uids := installedUIDs(ctx, ns)

		By("switching to a PackageInstall: its App takes over the same kapp app")
		setInstallWith(ctx, name, "packageinstall")
		waitInstalledSays(ctx, name, ContainSubstring("through PackageInstall"))
		expectServed(ctx, name)
		Expect(installedUIDs(ctx, ns)).To(Equal(uids))

		By("switching back to an App: the PackageInstall goes without deleting anything, the new App adopts it all")
		setInstallWith(ctx, name, "app")
		waitInstalledSays(ctx, name, Equal("Instantiated bundle "+name))
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: name}, app)).To(Succeed())
		Expect(metav1.GetControllerOf(app).Kind).To(Equal(rukpakv1alpha2.OwnerKind))
		expectGone(ctx, &packagingv1alpha1.PackageInstall{ObjectMeta: metav1.ObjectMeta{Namespace: harness.SystemNamespace, Name: name}})
		Expect(packageVersions(ctx, name)).To(BeEmpty())
		Expect(installedUIDs(ctx, ns)).To(Equal(uids))
	})
})

// pushPlain pushes examples/bundles/plain-hello with its ConfigMap's
// greeting set, plus a broken manifest when broken is not empty, and
// returns the reference.
func pushPlain(repoTag, greeting, broken string) string {
	dir := GinkgoT().TempDir()
	src := filepath.Join(env.Root, "examples", "bundles", "plain-hello", "manifests")
	Expect(os.MkdirAll(filepath.Join(dir, "manifests"), 0o755)).To(Succeed())
	entries, err := os.ReadDir(src)
	Expect(err).NotTo(HaveOccurred())
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		Expect(err).NotTo(HaveOccurred())
		data = []byte(strings.ReplaceAll(string(data), "hello from a plain bundle", greeting))
		Expect(os.WriteFile(filepath.Join(dir, "manifests", e.Name()), data, 0o644)).To(Succeed())
	}
	if broken != "" {
		Expect(os.WriteFile(filepath.Join(dir, "manifests", "broken.yaml"), []byte(broken), 0o644)).To(Succeed())
	}
	ref, _, err := env.Registry.PushDir(dir, repoTag)
	Expect(err).NotTo(HaveOccurred())
	return ref
}

func imageSource(ref string) rukpakv1alpha2.BundleSource {
	return rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: ref}}
}

func setImage(ctx context.Context, name, ref string) {
	patch := fmt.Sprintf(`{"spec":{"source":{"image":{"ref":%q}}}}`, ref)
	bd := &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: name}}
	ExpectWithOffset(1, env.Client.Patch(ctx, bd, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

func setInstallWith(ctx context.Context, name, mode string) {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, rukpakv1alpha2.AnnotationInstallWith, mode)
	bd := &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: name}}
	ExpectWithOffset(1, env.Client.Patch(ctx, bd, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

// waitCondition waits until the condition of type t is about generation
// gen with the status and reason, and returns it.
func waitCondition(ctx context.Context, name string, gen int64, t string, st metav1.ConditionStatus, reason string) metav1.Condition {
	var got metav1.Condition
	EventuallyWithOffset(1, func(g Gomega) {
		bd := &rukpakv1alpha2.BundleDeployment{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, bd)).To(Succeed())
		g.Expect(bd.Generation).To(Equal(gen))
		c := apimeta.FindStatusCondition(bd.Status.Conditions, t)
		g.Expect(c).NotTo(BeNil(), "no %s condition: %+v", t, bd.Status.Conditions)
		g.Expect(*c).To(And(HaveField("ObservedGeneration", gen), HaveField("Status", st), HaveField("Reason", reason)), "%+v", bd.Status.Conditions)
		got = *c
	}).WithContext(ctx).WithTimeout(serveTimeout).Should(Succeed())
	return got
}

// waitInstalledSays waits until bd name is Installed with a message that
// matches.
func waitInstalledSays(ctx context.Context, name string, message gomegatypes.GomegaMatcher) {
	EventuallyWithOffset(1, func(g Gomega) {
		bd := &rukpakv1alpha2.BundleDeployment{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, bd)).To(Succeed())
		c := apimeta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Message).To(message)
	}).WithContext(ctx).WithTimeout(serveTimeout).Should(Succeed())
}

// expectServed checks that bd name is installed through its PackageInstall
// in the system namespace, which it owns, and whose App the
// PackageInstall controls, and returns both.
func expectServed(ctx context.Context, name string) (*packagingv1alpha1.PackageInstall, *kappctrlv1alpha1.App) {
	pi := &packagingv1alpha1.PackageInstall{}
	ExpectWithOffset(1, env.Client.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: name}, pi)).To(Succeed())
	ExpectWithOffset(1, metav1.GetControllerOf(pi)).To(HaveField("Kind", rukpakv1alpha2.OwnerKind))
	ExpectWithOffset(1, pi.Annotations).To(HaveKey("packaging.carvel.dev/downgradable"))
	ExpectWithOffset(1, pi.Spec.PackageRef.RefName).To(Equal(name + ".bundles.rukpak-kapp.dev"))
	app := &kappctrlv1alpha1.App{}
	ExpectWithOffset(1, env.Client.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: name}, app)).To(Succeed())
	ExpectWithOffset(1, metav1.GetControllerOf(app)).To(HaveField("Kind", "PackageInstall"))
	return pi, app
}

// packageVersions lists the versions of bd name's Packages through the
// aggregated API, as kctrl package available list -p does.
func packageVersions(ctx context.Context, name string) ([]string, error) {
	pkgs, err := harness.KctrlAvailableVersions(ctx, env.ControlPlane.Config, harness.SystemNamespace, name+".bundles.rukpak-kapp.dev")
	var out []string
	for _, p := range pkgs {
		out = append(out, p.Version)
	}
	return out, err
}

func expectGreeting(ctx context.Context, ns, greeting, bdName string) {
	cm := &corev1.ConfigMap{}
	ExpectWithOffset(1, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hello-settings"}, cm)).To(Succeed())
	ExpectWithOffset(1, cm.Data).To(HaveKeyWithValue("greeting", greeting))
	ExpectWithOffset(1, cm.Labels).To(HaveKeyWithValue(rukpakv1alpha2.LabelOwnerName, bdName))
}

func expectReplicas(ctx context.Context, ns, name string, n int32) {
	dep := &appsv1.Deployment{}
	ExpectWithOffset(1, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, dep)).To(Succeed())
	ExpectWithOffset(1, *dep.Spec.Replicas).To(Equal(n))
}

// installedUIDs are the UIDs of what examples/bundles/plain-hello installs.
func installedUIDs(ctx context.Context, ns string) map[string]types.UID {
	objs := map[string]client.Object{
		"configmap":      &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello-settings"}},
		"serviceaccount": &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"}},
		"crd":            &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "greetings.example.rukpak-kapp.dev"}},
	}
	out := map[string]types.UID{}
	for k, o := range objs {
		ExpectWithOffset(1, env.Client.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
		out[k] = o.GetUID()
	}
	return out
}

func expectGone(ctx context.Context, o client.Object) {
	EventuallyWithOffset(1, func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(o), o))
	}).WithContext(ctx).WithTimeout(serveTimeout).Should(BeTrue(), "%T %s is still there", o, o.GetName())
}

// deleteBD deletes a BundleDeployment and waits until the adapter let it go.
func deleteBD(ctx context.Context, name string) {
	bd := &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: name}}
	Expect(client.IgnoreNotFound(env.Client.Delete(ctx, bd))).To(Succeed())
	expectGone(ctx, bd)
}
