package packaging_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/operatorcatalog"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
)

// manyPackages is a catalog of n packages of one bundle each: enough that
// publishing it takes seconds.
func manyPackages(n int) *declcfg.DeclarativeConfig {
	cfg := &declcfg.DeclarativeConfig{}
	for i := range n {
		name := fmt.Sprintf("many-%03d", i)
		cfg.Packages = append(cfg.Packages, declcfg.Package{Schema: declcfg.SchemaPackage, Name: name, DefaultChannel: "stable"})
		cfg.Channels = append(cfg.Channels, declcfg.Channel{Schema: declcfg.SchemaChannel, Package: name, Name: "stable",
			Entries: []declcfg.ChannelEntry{{Name: name + ".v1.0.0"}}})
		cfg.Bundles = append(cfg.Bundles, declcfg.Bundle{Schema: declcfg.SchemaBundle, Package: name, Name: name + ".v1.0.0",
			Image: "registry.example/" + name + "@sha256:" + fmt.Sprintf("%064d", i), Properties: []property.Property{property.MustBuildPackage(name, "1.0.0")}})
	}
	return cfg
}

// manyPackagesCatalog is an OperatorCatalog named operators in a new
// namespace ns, of an image of manyPackages(300).
func manyPackagesCatalog(ctx context.Context, ns string) *catalogsv1alpha1.OperatorCatalog {
	catalogsAPI(ctx)
	createNamespace(ctx, ns)
	image, err := env.PushCatalogImage(manyPackages(300), "catalog/"+ns+":latest")
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return newCatalog(ctx, ns, "operators", image)
}

var _ = Describe("an OperatorCatalog's objects come from the cluster", func() {
	It("writes again a Package deleted by hand while it still publishes, and counts what exists", func(ctx context.Context) {
		const ns = "catalog-during"
		cat := manyPackagesCatalog(ctx, ns)

		By("the first Package it writes is deleted at once, by hand")
		mine := client.MatchingLabels{operatorcatalog.LabelCatalog: cat.Name}
		var first datav1alpha1.Package
		Eventually(func(g Gomega) {
			var list datav1alpha1.PackageList
			g.Expect(env.Client.List(ctx, &list, client.InNamespace(ns), mine)).To(Succeed())
			g.Expect(list.Items).NotTo(BeEmpty())
			first = list.Items[0]
		}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(20 * time.Millisecond).Should(Succeed())
		Expect(env.Client.Delete(ctx, &first)).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cat), cat)).To(Succeed())
		c := meta.FindStatusCondition(cat.Status.Conditions, catalogsv1alpha1.TypePublished)
		Expect(c == nil || c.Status != metav1.ConditionTrue).To(BeTrue(), "the catalog was published before the delete: %+v", c)

		By("it is back within 10 s of the end of the publication, and the counts are of the objects that exist")
		published(ctx, cat, "")
		Eventually(func() error {
			return env.Client.Get(ctx, client.ObjectKeyFromObject(&first), &datav1alpha1.Package{})
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
		var pkgs datav1alpha1.PackageList
		Expect(env.Client.List(ctx, &pkgs, client.InNamespace(ns), mine)).To(Succeed())
		var metas datav1alpha1.PackageMetadataList
		Expect(env.Client.List(ctx, &metas, client.InNamespace(ns), mine)).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cat), cat)).To(Succeed())
		Expect(cat.Status.Packages).To(BeEquivalentTo(len(pkgs.Items)))
		Expect(cat.Status.PackageMetadatas).To(BeEquivalentTo(len(metas.Items)))
		Expect(pkgs.Items).To(HaveLen(300))
	}, SpecTimeout(5*time.Minute))
})

var _ = Describe("faults in the middle of a large publication", Serial, func() {
	It("converges when the adapter is killed and kapp-controller stopped while it publishes: every Package once, labelled, counted", func(ctx context.Context) {
		const ns = "catalog-faults"
		cat := manyPackagesCatalog(ctx, ns)
		mine := client.MatchingLabels{operatorcatalog.LabelCatalog: cat.Name}
		written := func() (int, error) {
			var list datav1alpha1.PackageList
			err := env.Client.List(ctx, &list, client.InNamespace(ns), mine)
			return len(list.Items), err
		}

		By("the adapter killed once some Packages are written, and started again")
		Eventually(written).WithContext(ctx).WithTimeout(time.Minute).WithPolling(20 * time.Millisecond).Should(BeNumerically(">", 0))
		env.Adapter.Kill()
		Expect(env.Adapter.Start(ctx)).To(Succeed())

		By("kapp-controller stopped once more are written, and started again")
		n, err := written()
		Expect(err).NotTo(HaveOccurred())
		Eventually(written).WithContext(ctx).WithTimeout(time.Minute).WithPolling(20 * time.Millisecond).Should(BeNumerically(">", n))
		env.StopKappController()
		DeferCleanup(func(ctx context.Context) {
			if env.KappController == nil {
				Expect(env.StartKappControllerAgain(ctx)).To(Succeed())
			}
		})
		Expect(env.StartKappControllerAgain(ctx)).To(Succeed())

		By("published whole: every Package once, each labelled, the counts the cluster's")
		Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cat), cat)).To(Succeed())
			c := meta.FindStatusCondition(cat.Status.Conditions, catalogsv1alpha1.TypePublished)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(catalogsv1alpha1.ReasonPublished), c.Message)
			g.Expect(cat.Status.Packages).To(BeEquivalentTo(300))
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		var all datav1alpha1.PackageList
		Expect(env.Client.List(ctx, &all, client.InNamespace(ns))).To(Succeed())
		Expect(all.Items).To(HaveLen(300), "no Package without the catalog's label, none twice")
		for _, p := range all.Items {
			Expect(p.Labels).To(HaveKeyWithValue(operatorcatalog.LabelCatalog, cat.Name), p.Name)
		}
		var metas datav1alpha1.PackageMetadataList
		Expect(env.Client.List(ctx, &metas, client.InNamespace(ns))).To(Succeed())
		Expect(cat.Status.PackageMetadatas).To(BeEquivalentTo(len(metas.Items)))
	}, SpecTimeout(6*time.Minute))
})
