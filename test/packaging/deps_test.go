package packaging_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/property"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// A catalog of four packages built from the registry+v1 corpus:
// ruptura-operator 0.9.1 with a metadata/dependencies.yaml that requires
// the package aws-efs-operator >=0.0.1; aws-efs-operator 0.0.8 (which
// provides SharedVolume) requiring headscale-operator >=0.1.0 the same
// way; headscale-operator 0.1.1; and needs-widgets, ruptura's bundle
// requiring an API no package provides. Installed through the calls kctrl
// makes.
var _ = Describe("dependencies from the catalog", func() {
	It("installs required packages from the catalog first, transitively, and then the bundle; refuses an API no package provides; leaves a dependency when its dependent goes and reuses it", func(ctx context.Context) {
		const ns = "catalog-deps"
		ruptura, widgets := "stable.ruptura-operator."+catalog.DefaultDomain, "stable.needs-widgets."+catalog.DefaultDomain
		createNamespace(ctx, ns)
		allowDependencies(ctx, ns)
		pinned := pushDepsCatalog(ctx)
		By("kctrl package repository add -r deps --url " + pinned)
		Expect(harness.KctrlRepositoryAdd(ctx, env.ControlPlane.Config, ns, "deps", pinned)).To(Succeed())
		uninstallAtEnd(ns, []string{"ruptura", "widgets", "aws-efs-operator", "headscale-operator"}, efsCRD, rupturaCRD, headscaleCRD)
		install := func(name, pkg string) error {
			return kctrl(ctx, func(ctx context.Context) error {
				return harness.KctrlPackageInstall(ctx, env.ControlPlane.Config, harness.KctrlInstall{Namespace: ns, Name: name, Package: pkg, Version: map[string]string{ruptura: "0.9.1", widgets: "1.0.0"}[pkg],
					Values: []byte("installNamespace: catalog-" + name + "\n")})
			})
		}

		By("kctrl package install -i ruptura -p " + ruptura + ": it requires aws-efs-operator, which requires headscale-operator; rukpak-kapp installs both from the catalog first")
		Expect(install("ruptura", ruptura)).To(Succeed())
		dependency := &packagingv1alpha1.PackageInstall{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "aws-efs-operator"}, dependency)).To(Succeed())
		Expect(dependency.Labels).To(HaveKeyWithValue(catalog.LabelRequiredBy, "ruptura"))
		Expect(dependency.Spec.PackageRef.RefName).To(Equal("stable.aws-efs-operator." + catalog.DefaultDomain))
		Expect(dependency.Spec.ServiceAccountName).To(Equal(catalog.DependenciesServiceAccount), "not the account kctrl made for ruptura, which goes with it")
		Expect(dependency.Status.Version).To(Equal("0.0.8"), "kctrl package installed list shows the dependency at its version")
		provider, dependent := &rukpakv1alpha2.BundleDeployment{}, &rukpakv1alpha2.BundleDeployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "aws-efs-operator." + ns}, provider)).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "ruptura." + ns}, dependent)).To(Succeed())
		Expect(installedAt(provider)).To(BeTrue(), "%+v", provider.Status.Conditions)
		Expect(installedAt(dependent)).To(BeTrue(), "%+v", dependent.Status.Conditions)
		first := meta.FindStatusCondition(provider.Status.Conditions, rukpakv1alpha2.TypeInstalled).LastTransitionTime
		then := meta.FindStatusCondition(dependent.Status.Conditions, rukpakv1alpha2.TypeInstalled).LastTransitionTime
		Expect(first.Time).NotTo(BeTemporally(">", then.Time), "the dependency was installed first")
		transitive := &packagingv1alpha1.PackageInstall{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "headscale-operator"}, transitive)).To(Succeed())
		Expect(transitive.Labels).To(HaveKeyWithValue(catalog.LabelRequiredBy, "aws-efs-operator"), "required by the dependency, not by ruptura")
		deepest := &rukpakv1alpha2.BundleDeployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "headscale-operator." + ns}, deepest)).To(Succeed())
		Expect(installedAt(deepest)).To(BeTrue(), "%+v", deepest.Status.Conditions)
		Expect(meta.FindStatusCondition(deepest.Status.Conditions, rukpakv1alpha2.TypeInstalled).LastTransitionTime.Time).NotTo(BeTemporally(">", first.Time))
		efsDeployment := &appsv1.Deployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "aws-efs-operator", Name: "aws-efs-operator"}, efsDeployment)).To(Succeed())

		By("kctrl package install -i widgets -p " + widgets + ": it requires an API no package of the catalog provides, and is refused with nothing installed for it")
		err := install("widgets", widgets)
		Expect(err).To(HaveOccurred())
		Expect(strings.Join(strings.Fields(err.Error()), " ")).To(And(
			ContainSubstring("cannot be met from its catalog"),
			ContainSubstring("no package of the catalog provides example.com/v1 Widget")))
		installs := &packagingv1alpha1.PackageInstallList{}
		Expect(env.Client.List(ctx, installs, client.InNamespace(ns))).To(Succeed())
		Expect(installs.Items).To(HaveLen(4), "ruptura, its two dependencies and widgets: nothing else was written")
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Namespace: "catalog-widgets", Name: "ruptura-operator"}, &appsv1.Deployment{}))).To(BeTrue())

		By("a Package that provides Widget joins the catalog (kubectl create): the refused bundle is woken by that Package's event, not a timer (a refusal has none), and installs it")
		entry := catalog.Entry{Package: "widgets-provider", Channel: "stable", Bundle: "widgets-provider.v1.0.0", Version: "1.0.0", RefName: "stable.widgets-provider." + catalog.DefaultDomain}
		// Its bundle image was never pushed: the dependency's install fails
		// to fetch, which is all this step needs of it.
		providerPkg := unpushedPackage(ns, entry, map[string]string{
			catalog.AnnotationProvides: catalog.ProvidesValue([]schema.GroupVersionKind{{Group: "example.com", Version: "v1", Kind: "Widget"}})})
		Expect(env.Client.Create(ctx, providerPkg)).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			Expect(harness.KctrlInstalledDelete(ctx, env.ControlPlane.Config, ns, "widgets-provider")).To(Succeed())
			Expect(client.IgnoreNotFound(env.Client.Delete(ctx, providerPkg))).To(Succeed())
		})
		Eventually(func(g Gomega) {
			c := installCondition(ctx, ns, "widgets", catalogsv1alpha1.TypeInstalled)
			g.Expect(c).NotTo(BeNil())
			// It installs it, then waits for it.
			g.Expect(c.Message).To(Or(ContainSubstring("installing widgets-provider 1.0.0 from the catalog as PackageInstall "+ns+"/widgets-provider"),
				ContainSubstring("waiting for PackageInstall "+ns+"/widgets-provider to install widgets-provider")))
		}).WithContext(ctx).Should(Succeed())
		Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: "widgets." + ns}, &rukpakv1alpha2.BundleDeployment{}))).To(BeTrue(),
			"nothing is written for the bundle before its dependencies are installed")
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "widgets-provider"}, &packagingv1alpha1.PackageInstall{})).To(Succeed())
		Expect(harness.KctrlInstalledDelete(ctx, env.ControlPlane.Config, ns, "widgets")).To(Succeed())

		By("kctrl package installed delete -i ruptura: its dependency stays, as OLM v0 leaves it")
		Expect(harness.KctrlInstalledDelete(ctx, env.ControlPlane.Config, ns, "ruptura")).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "aws-efs-operator"}, dependency)).To(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "aws-efs-operator", Name: "aws-efs-operator"}, efsDeployment)).To(Succeed())

		By("kctrl package install -i ruptura again: the dependency installed is reused, nothing else is installed")
		Expect(install("ruptura", ruptura)).To(Succeed())
		Expect(env.Client.List(ctx, installs, client.InNamespace(ns))).To(Succeed())
		Expect(installs.Items).To(HaveLen(4), "ruptura, its two dependencies and widgets-provider")
		again := &packagingv1alpha1.PackageInstall{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "aws-efs-operator"}, again)).To(Succeed())
		Expect(again.UID).To(Equal(dependency.UID))
	}, SpecTimeout(6*time.Minute))
})

// The CRDs of the dependency catalog's operators as well as efsCRD.
const rupturaCRD, headscaleCRD = "rupturainstances.ruptura.io", "headscales.headscale.jicoyne.io"

// uninstallAtEnd deletes the PackageInstalls installs of ns (kctrl
// package installed delete) at the spec's end, and waits for the CRDs
// crds their operators installed to be gone.
func uninstallAtEnd(ns string, installs []string, crds ...string) {
	DeferCleanup(func(ctx context.Context) {
		for _, name := range installs {
			Expect(harness.KctrlInstalledDelete(ctx, env.ControlPlane.Config, ns, name)).To(Succeed(), name)
		}
		for _, crd := range crds {
			Eventually(func() bool {
				return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: crd}, &apiextensionsv1.CustomResourceDefinition{}))
			}).WithContext(ctx).Should(BeTrue(), crd)
		}
	})
}

// unpushedPackage is the catalog Package of entry in ns (the default
// channel's, with extra annotations), made by hand as a catalog publishes
// it, whose bundle image was never pushed: a spec that needs only the
// Package, not an install of it.
func unpushedPackage(ns string, entry catalog.Entry, extra map[string]string) *datav1alpha1.Package {
	ann := entry.Annotations()
	ann[catalog.AnnotationDefaultChannel] = "true"
	for k, v := range extra {
		ann[k] = v
	}
	version := entry.PackageVersion()
	return &datav1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: entry.RefName + "." + version, Labels: map[string]string{catalog.LabelPackage: entry.Package}, Annotations: ann},
		Spec: datav1alpha1.PackageSpec{RefName: entry.RefName, Version: version, Template: datav1alpha1.AppTemplateSpec{Spec: catalog.AppTemplate(catalog.Install{Entry: entry,
			Image: env.Registry.Host + "/deps/" + entry.Package + ":v" + entry.Version, InstallNamespace: entry.Package, Class: rukpakv1alpha2.ClassRegistry})}}}
}

// allowDependencies lets the adapter install dependencies in ns (with
// config/catalogs' ClusterRole), with an account that may install anything.
func allowDependencies(ctx context.Context, ns string) {
	catalogsAPI(ctx)
	By("the namespace lets the adapter install dependencies there (config/catalogs' ClusterRole " + catalog.DependenciesRole + ", bound here only)")
	Expect(env.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: catalog.DependenciesRole},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: catalog.DependenciesRole},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: harness.SystemNamespace, Name: harness.AdapterServiceAccount}}})).To(Succeed())
	By("and names the account dependencies install with: ServiceAccount " + catalog.DependenciesServiceAccount + ", here with every right, as kctrl's own installer account")
	Expect(env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: catalog.DependenciesServiceAccount}})).To(Succeed())
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + catalog.DependenciesServiceAccount},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: catalog.DependenciesServiceAccount}}}
	Expect(env.Client.Create(ctx, binding)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { Expect(env.Client.Delete(ctx, binding)).To(Succeed()) })
}

// pushDepsCatalog pushes the three packages' bundles and their catalog as a
// package repository; it returns the repository's pinned reference.
func pushDepsCatalog(ctx context.Context) string {
	corpus := filepath.Join(env.Root, "test", "testdata", "registry-v1-corpus")
	requiring := func(bundle, deps string) string {
		dir := GinkgoT().TempDir()
		Expect(os.CopyFS(dir, os.DirFS(filepath.Join(corpus, bundle)))).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "metadata", "dependencies.yaml"), []byte("dependencies:\n"+deps), 0o644)).To(Succeed())
		return dir
	}
	// The catalog says what each bundle's dependencies.yaml says, as opm
	// renders it: olm.package.required and olm.gvk.required properties.
	bundles := []struct {
		pkg, version, dir string
		props             []property.Property
	}{
		{"aws-efs-operator", "0.0.8", requiring("aws-efs-operator/0.0.8", "- type: olm.package\n  value: {packageName: headscale-operator, version: '>=0.1.0'}\n"),
			[]property.Property{property.MustBuildGVK("aws-efs.managed.openshift.io", "v1alpha1", "SharedVolume"), property.MustBuildPackageRequired("headscale-operator", ">=0.1.0")}},
		{"headscale-operator", "0.1.1", filepath.Join(corpus, "headscale-operator", "0.1.1"), nil},
		{"ruptura-operator", "0.9.1", requiring("ruptura-operator/0.9.1", "- type: olm.package\n  value: {packageName: aws-efs-operator, version: '>=0.0.1'}\n"),
			[]property.Property{property.MustBuildPackageRequired("aws-efs-operator", ">=0.0.1")}},
		{"needs-widgets", "1.0.0", requiring("ruptura-operator/0.9.1", "- type: olm.gvk\n  value: {group: example.com, version: v1, kind: Widget}\n"),
			[]property.Property{property.MustBuildGVKRequired("example.com", "v1", "Widget")}},
	}
	var cfg declcfg.DeclarativeConfig
	for _, b := range bundles {
		image, _, err := env.Registry.PushDir(b.dir, "deps/"+b.pkg+":v"+b.version)
		Expect(err).NotTo(HaveOccurred())
		name := b.pkg + ".v" + b.version
		cfg.Packages = append(cfg.Packages, declcfg.Package{Schema: declcfg.SchemaPackage, Name: b.pkg, DefaultChannel: "stable"})
		cfg.Channels = append(cfg.Channels, declcfg.Channel{Schema: declcfg.SchemaChannel, Package: b.pkg, Name: "stable", Entries: []declcfg.ChannelEntry{{Name: name}}})
		cfg.Bundles = append(cfg.Bundles, declcfg.Bundle{Schema: declcfg.SchemaBundle, Name: name, Package: b.pkg, Image: image,
			Properties: append([]property.Property{property.MustBuildPackage(b.pkg, b.version)}, b.props...)})
	}
	// The corpus operators' own images are on registries this machine
	// cannot reach: only the bundles are locked (the air-gap suite locks
	// both).
	pinned, _ := pushCatalog(ctx, cfg, env.Registry.Host+"/deps/repository", "--operator-images=false")
	return pinned
}
