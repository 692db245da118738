package packaging_test

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/operatorcatalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var installCatalogs sync.Once

// catalogsAPI installs the catalog CRDs (OperatorCatalog, OperatorInstall:
// config/catalogs), once, while the adapter runs: the suite's adapter
// started without them (harness.Options CatalogsLater), so every catalog
// spec shows an API installed after the adapter started is served without
// a restart.
func catalogsAPI(ctx context.Context) {
	installCatalogs.Do(func() {
		Expect(env.Adapter).NotTo(BeNil())
		Expect(env.InstallCatalogsAPI(ctx)).To(Succeed())
	})
}

// catalogOn pushes the relocated test catalog as an image on a base layer
// of baseBytes of incompressible data (opm's binaries, as far as the
// adapter can tell), to reg (the harness's plain registry when nil).
func catalogOn(ctx context.Context, repoTag string, baseBytes int, private bool) string {
	base := GinkgoT().TempDir()
	noise := make([]byte, baseBytes)
	_, err := rand.Read(noise)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.MkdirAll(filepath.Join(base, "bin"), 0o755)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(base, "bin", "opm"), noise, 0o755)).To(Succeed())
	top := GinkgoT().TempDir()
	Expect(os.CopyFS(filepath.Join(top, "configs"), os.DirFS(relocatedCatalog(ctx)))).To(Succeed())
	reg := env.Registry
	if private {
		reg = env.PrivateRegistry
	}
	ref, _, err := reg.PushLayers(repoTag, map[string]string{fetch.CatalogConfigsLabel: "/configs"}, base, top)
	Expect(err).NotTo(HaveOccurred())
	return ref
}

func newCatalog(ctx context.Context, ns, name, image string, edit ...func(*catalogsv1alpha1.OperatorCatalog)) *catalogsv1alpha1.OperatorCatalog {
	cat := &catalogsv1alpha1.OperatorCatalog{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       catalogsv1alpha1.OperatorCatalogSpec{Image: image, PollInterval: &metav1.Duration{Duration: operatorcatalog.MinPoll}},
	}
	for _, e := range edit {
		e(cat)
	}
	Expect(env.Client.Create(ctx, cat)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { _ = client.IgnoreNotFound(env.Client.Delete(ctx, cat)) })
	return cat
}

// condition waits until cat's Published condition, for its generation, has
// reason, and returns it.
func condition(ctx context.Context, cat *catalogsv1alpha1.OperatorCatalog, reason string) *metav1.Condition {
	var c *metav1.Condition
	EventuallyWithOffset(1, func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cat), cat)).To(Succeed())
		c = meta.FindStatusCondition(cat.Status.Conditions, catalogsv1alpha1.TypePublished)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.ObservedGeneration).To(Equal(cat.Generation))
		g.Expect(c.Reason).To(Equal(reason), c.Message)
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	return c
}

var _ = Describe("OperatorCatalogs in production", func() {
	ref := "beta.prometheus." + catalog.DefaultDomain
	versions := []string{"1.0.0", "1.0.1", "1.2.0", "2.0.0"}

	It("publishes a catalog image built on a base layer over the 48 MiB the adapter once held in memory", func(ctx context.Context) {
		const ns = "catalog-base"
		catalogsAPI(ctx)
		createNamespace(ctx, ns)
		cat := newCatalog(ctx, ns, "operators", catalogOn(ctx, "catalog/on-base:latest", 64<<20, false))
		published(ctx, cat, "")
		Expect(cat.Status.Packages).To(BeEquivalentTo(6))
		Expect(kctrlVersions(ctx, ns, ref)).To(ConsistOf(versions))
	}, SpecTimeout(3*time.Minute))

	It("follows a private registry with the pull secret it names, and says which Secret is missing without it", func(ctx context.Context) {
		const ns = "catalog-private"
		catalogsAPI(ctx)
		createNamespace(ctx, ns)
		cat := newCatalog(ctx, ns, "operators", catalogOn(ctx, "catalog/private:latest", 1<<10, true), func(c *catalogsv1alpha1.OperatorCatalog) {
			c.Spec.PullSecret = "registry-credentials"
		})
		c := condition(ctx, cat, catalogsv1alpha1.ReasonPullFailed)
		Expect(c.Message).To(ContainSubstring("the adapter may not read its pull secret registry-credentials in namespace " + ns))
		Expect(c.Message).To(ContainSubstring("kubectl create rolebinding rukpak-kapp-catalog-pull-secrets -n " + ns + " --clusterrole " + operatorcatalog.PullSecretsRole))
		Expect(c.Message).To(MatchRegexp(`It is looked up again at \d{4}-`))

		By("the namespace lets the adapter read its pull secret (config/catalogs' ClusterRole, bound here only): the Secret is missing")
		Expect(env.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rukpak-kapp-catalog-pull-secrets"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: operatorcatalog.PullSecretsRole},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: harness.SystemNamespace, Name: harness.AdapterServiceAccount}}})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cat), cat)).To(Succeed())
			c := meta.FindStatusCondition(cat.Status.Conditions, catalogsv1alpha1.TypePublished)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Message).To(ContainSubstring("its pull secret registry-credentials (spec.pullSecret) is not in namespace " + ns))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())

		By("the Secret made: used at the next attempt the status named")
		Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "registry-credentials"}, Type: corev1.SecretTypeDockerConfigJson,
			Data: map[string][]byte{corev1.DockerConfigJsonKey: env.PrivateRegistry.DockerConfigJSON()}})).To(Succeed())
		published(ctx, cat, "")
		Expect(kctrlVersions(ctx, ns, ref)).To(ConsistOf(versions))

		By("without spec.pullSecret the registry refuses: said, anonymously")
		Expect(harness.Edit(ctx, env.Client, cat, func(cat *catalogsv1alpha1.OperatorCatalog) { cat.Spec.PullSecret = "" })).To(Succeed())
		c = condition(ctx, cat, catalogsv1alpha1.ReasonPullFailed)
		Expect(c.Message).To(ContainSubstring("anonymously"))
		Expect(c.Message).NotTo(ContainSubstring(env.PrivateRegistry.Password))
	}, SpecTimeout(3*time.Minute))

	It("keeps what it publishes: a Package deleted or edited by hand is back within 10 s; a second catalog of the same packages is refused naming the first, and deleting either never withdraws the other's", func(ctx context.Context) {
		const ns = "catalog-owned"
		catalogsAPI(ctx)
		createNamespace(ctx, ns)
		image := catalogOn(ctx, "catalog/owned:latest", 1<<10, false)
		first := newCatalog(ctx, ns, "first", image)
		published(ctx, first, "")

		By("a Package deleted by hand")
		name := ref + ".1.0.1"
		pkg := &datav1alpha1.Package{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pkg)).To(Succeed())
		Expect(env.Client.Delete(ctx, pkg)).To(Succeed())
		Eventually(func() error { return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pkg) }).
			WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())

		By("a Package edited by hand")
		template := pkg.Spec.Template.DeepCopy()
		pkg.Spec.ReleaseNotes = "edited by hand"
		Expect(env.Client.Update(ctx, pkg)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pkg)).To(Succeed())
			g.Expect(pkg.Spec.ReleaseNotes).NotTo(Equal("edited by hand"))
			g.Expect(pkg.Spec.Template).To(Equal(*template))
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())

		By("a second catalog of the same packages")
		second := newCatalog(ctx, ns, "second", image)
		c := condition(ctx, second, catalogsv1alpha1.ReasonConflict)
		Expect(c.Message).To(ContainSubstring("OperatorCatalog first"))
		Expect(second.Status.Packages).To(BeZero())

		By("deleting the second leaves the first's Packages and status")
		Expect(env.Client.Delete(ctx, second)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(second), &catalogsv1alpha1.OperatorCatalog{}))
		}).WithContext(ctx).Should(BeTrue())
		Consistently(func(g Gomega) {
			g.Expect(kctrlVersions(ctx, ns, ref)).To(ConsistOf(versions))
		}).WithContext(ctx).WithTimeout(3 * time.Second).Should(Succeed())
		published(ctx, first, "")
		Expect(first.Status.Packages).To(BeEquivalentTo(6))

		By("deleting the first while a second wants them: the second publishes them within seconds")
		second = newCatalog(ctx, ns, "second", image)
		condition(ctx, second, catalogsv1alpha1.ReasonConflict)
		Expect(env.Client.Delete(ctx, first)).To(Succeed())
		published(ctx, second, "")
		Expect(second.Status.Packages).To(BeEquivalentTo(6))
		Expect(kctrlVersions(ctx, ns, ref)).To(ConsistOf(versions))
	}, SpecTimeout(4*time.Minute))
})
