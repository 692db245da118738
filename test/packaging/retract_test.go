package packaging_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// An OperatorCatalog's tag moved back to a catalog without its head: the
// head is withdrawn when nothing installs it (neither kapp-controller nor
// the notice can pick it), and kept, marked retracted, for an install that
// has it, until that install goes.
var _ = Describe("a catalog whose tag moves back", func() {
	It("withdraws the head it dropped when nothing installs it, keeps it marked retracted while an install has it, offers it to nobody, and withdraws it once the install goes", func(ctx context.Context) {
		const ns, install, installNS = "catalog-retract", "prom", "catalog-retract-op"
		ref := "beta.prometheus." + catalog.DefaultDomain
		bdName := install + "." + ns
		head := &datav1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ref + ".2.1.0"}}
		catalogsAPI(ctx)
		createNamespace(ctx, ns)
		dir := relocatedCatalog(ctx)
		next := nextCatalog(ctx, dir)
		cat := newCatalog(ctx, ns, "operators", pushCatalogImage(next, "catalog/retract:latest"))
		revision := published(ctx, cat, "")

		By("kctrl package install -i prom -p " + ref + " --version 2.0.0: its notice offers the head, 2.1.0")
		DeferCleanup(func(ctx context.Context) {
			Expect(harness.KctrlInstalledDelete(ctx, env.ControlPlane.Config, ns, install)).To(Succeed())
		})
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlPackageInstall(ctx, env.ControlPlane.Config, harness.KctrlInstall{Namespace: ns, Name: install, Package: ref, Version: "2.0.0",
				Values: []byte("installNamespace: " + installNS + "\n")})
		})).To(Succeed())
		Eventually(upgradeNotice).WithContext(ctx).WithArguments(ns, install).Should(And(HavePrefix("True "+catalogsv1alpha1.ReasonUpgradeAvailable), ContainSubstring("offers 2.1.0")))

		By("the tag moved back to a catalog without 2.1.0, which nothing installs: withdrawn, so kapp-controller cannot pick it, and the notice says the head again")
		pushCatalogImage(dir, "catalog/retract:latest")
		revision = published(ctx, cat, revision)
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(head), head))).To(BeTrue(), "withdrawn before the catalog said Published")
		Expect(kctrlVersions(ctx, ns, ref)).To(ConsistOf("1.0.0", "1.0.1", "1.2.0", "2.0.0"))
		Eventually(upgradeNotice).WithContext(ctx).WithArguments(ns, install).Should(HavePrefix("False " + catalogsv1alpha1.ReasonAtChannelHead))

		By("forward again, and kctrl package installed update -i prom --version 2.1.0")
		pushCatalogImage(next, "catalog/retract:latest")
		revision = published(ctx, cat, revision)
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlInstalledUpdate(ctx, env.ControlPlane.Config, ns, install, "2.1.0")
		})).To(Succeed())
		bd := &rukpakv1alpha2.BundleDeployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationBundle, "prometheus-operator.2.1.0"))
		Expect(installedAt(bd)).To(BeTrue(), "%+v", bd.Status.Conditions)
		before := catalogUIDs(ctx, bdName, installNS)

		By("the tag moved back with 2.1.0 installed: kept for the install, marked retracted in the catalog's revision; the notice says the channel no longer publishes it")
		pushCatalogImage(dir, "catalog/retract:latest")
		revision = published(ctx, cat, revision)
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(head), head)).To(Succeed())
		Expect(head.Annotations).To(HaveKeyWithValue(catalog.AnnotationRetracted, revision))
		Expect(kctrlVersions(ctx, ns, ref)).To(ConsistOf("1.0.0", "1.0.1", "1.2.0", "2.0.0", "2.1.0"), "kapp-controller still finds the version installed")
		Eventually(upgradeNotice).WithContext(ctx).WithArguments(ns, install).Should(And(HavePrefix("False "+catalogsv1alpha1.ReasonNotInChannel),
			ContainSubstring("no longer publishes 2.1.0, the version installed (it was retracted)")))
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		Expect(installedAt(bd)).To(BeTrue(), "the version installed keeps running: %+v", bd.Status.Conditions)
		Expect(catalogUIDs(ctx, bdName, installNS)).To(Equal(before), "a retraction recreates nothing")

		By("kctrl package installed delete -i prom: nothing has 2.1.0 any more; its catalog withdraws it within seconds")
		Expect(harness.KctrlInstalledDelete(ctx, env.ControlPlane.Config, ns, install)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(head), head))
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(BeTrue())
	}, SpecTimeout(6*time.Minute))
})
