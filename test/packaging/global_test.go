package packaging_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// A package repository added to kapp-controller's global packaging
// namespace, which every namespace sees (kctrl package available list -n
// NS lists its Packages): a catalog bundle installed from it in another
// namespace gets its dependency from there, and its update notice follows
// the global Packages, to a channel that no longer publishes the version
// installed.
var _ = Describe("a catalog in the global packaging namespace", func() {
	It("meets a dependency from the global namespace's Packages and follows their updates in the notice", func(ctx context.Context) {
		const ns = "global-deps"
		createNamespace(ctx, ns)
		allowDependencies(ctx, ns)
		pinned := pushDepsCatalog(ctx)
		By("kctrl package repository add -r global-deps --url " + pinned + " -n " + harness.PackagingGlobalNamespace)
		Expect(harness.KctrlRepositoryAdd(ctx, env.ControlPlane.Config, harness.PackagingGlobalNamespace, "global-deps", pinned)).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			By("kctrl package repository delete -r global-deps -n " + harness.PackagingGlobalNamespace + ": no other spec sees its Packages")
			repo := &packagingv1alpha1.PackageRepository{ObjectMeta: metav1.ObjectMeta{Namespace: harness.PackagingGlobalNamespace, Name: "global-deps"}}
			Expect(client.IgnoreNotFound(env.Client.Delete(ctx, repo))).To(Succeed())
			Eventually(func(g Gomega) {
				list := &datav1alpha1.PackageList{}
				g.Expect(env.Client.List(ctx, list, client.InNamespace(harness.PackagingGlobalNamespace), client.HasLabels{catalog.LabelPackage})).To(Succeed())
				g.Expect(list.Items).To(BeEmpty())
			}).WithContext(ctx).Should(Succeed())
		})
		uninstallAtEnd(ns, []string{"efs", "headscale-operator"}, efsCRD, headscaleCRD)
		available, err := harness.KctrlAvailableList(ctx, env.ControlPlane.Config, ns)
		Expect(err).NotTo(HaveOccurred())
		Expect(available).To(ContainElement(HaveField("Name", "stable.aws-efs-operator."+catalog.DefaultDomain)), "kctrl package available list -n %s lists the global Packages", ns)

		By("kctrl package install -i efs -p stable.aws-efs-operator." + catalog.DefaultDomain + " -n " + ns + ": it requires headscale-operator, which only the global namespace publishes; rukpak-kapp installs it from there first")
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlPackageInstall(ctx, env.ControlPlane.Config, harness.KctrlInstall{Namespace: ns, Name: "efs", Package: "stable.aws-efs-operator." + catalog.DefaultDomain,
				Values: []byte("installNamespace: aws-efs-operator\n")})
		})).To(Succeed())
		dependency := &packagingv1alpha1.PackageInstall{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "headscale-operator"}, dependency)).To(Succeed())
		Expect(dependency.Labels).To(HaveKeyWithValue(catalog.LabelRequiredBy, "efs"))
		Expect(dependency.Status.Version).To(Equal("0.1.1"))
		const headscaleBD = "headscale-operator." + ns
		Eventually(func(g Gomega) {
			bd := &rukpakv1alpha2.BundleDeployment{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: headscaleBD}, bd)).To(Succeed())
			g.Expect(installedAt(bd)).To(BeTrue(), "%+v", bd.Status.Conditions)
			g.Expect(upgradeNotice(ctx, ns, "headscale-operator")).To(HavePrefix("False " + catalogsv1alpha1.ReasonAtChannelHead))
		}).WithContext(ctx).Should(Succeed())

		By("a newer headscale-operator joins the global namespace (kubectl create -n " + harness.PackagingGlobalNamespace + "): the install in " + ns + " hears of it")
		entry := catalog.Entry{Package: "headscale-operator", Channel: "stable", Bundle: "headscale-operator.v0.1.2", Version: "0.1.2", Replaces: "headscale-operator.v0.1.1",
			RefName: "stable.headscale-operator." + catalog.DefaultDomain}
		// Nothing installs it (the dependency is pinned at 0.1.1).
		newer := unpushedPackage(harness.PackagingGlobalNamespace, entry, nil)
		Expect(env.Client.Create(ctx, newer)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(env.Client.Delete(ctx, newer))).To(Succeed()) })
		Eventually(func() (string, error) { return upgradeNotice(ctx, ns, "headscale-operator") }).WithContext(ctx).
			Should(And(HavePrefix("True "+catalogsv1alpha1.ReasonUpgradeAvailable), ContainSubstring("0.1.2")))

		By("kubectl delete the global Package: the notice says the channel's head again")
		Expect(env.Client.Delete(ctx, newer)).To(Succeed())
		Eventually(func() (string, error) { return upgradeNotice(ctx, ns, "headscale-operator") }).WithContext(ctx).
			Should(HavePrefix("False " + catalogsv1alpha1.ReasonAtChannelHead))

		By("the Package of the version installed deleted from the global namespace, as a repository update that drops it does: the channel publishes nothing, and the notice says so, with what to do")
		installed := &datav1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Namespace: harness.PackagingGlobalNamespace, Name: entry.RefName + ".0.1.1"}}
		Expect(env.Client.Delete(ctx, installed)).To(Succeed())
		Eventually(func() (string, error) { return upgradeNotice(ctx, ns, "headscale-operator") }).WithContext(ctx).
			Should(And(HavePrefix("False "+catalogsv1alpha1.ReasonNotInChannel), ContainSubstring("publishes no version seen from namespace "+ns),
				ContainSubstring("kctrl package available list -n "+ns)))
		bd := &rukpakv1alpha2.BundleDeployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: headscaleBD}, bd)).To(Succeed())
		Expect(installedAt(bd)).To(BeTrue(), "the version installed keeps running: %+v", bd.Status.Conditions)
	}, SpecTimeout(5*time.Minute))
})
