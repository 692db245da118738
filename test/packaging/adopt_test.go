package packaging_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// Installs made by the catalog Packages of a release before
// OperatorInstalls: their template rendered the BundleDeployment itself
// (kapp's labels on it, the install's values copied into its
// annotations), and the adapter reported the catalog's conditions on it.
// When the catalog publishes the Packages of this release (an
// OperatorCatalog does at once; a repository when it is pushed again),
// kapp-controller renders an OperatorInstall in their place, kapp leaves
// the BundleDeployment where it is, and the OperatorInstall adopts it:
// nothing is deleted, recreated or restarted.
var _ = Describe("installs a catalog Package's template made before OperatorInstalls", func() {
	It("are adopted in place by their OperatorInstall when the catalog publishes this release's Packages: nothing recreated or restarted, and they upgrade as any install", func(ctx context.Context) {
		const ns, install, installNS = "adopt", "efs", "adopt-op"
		ref := "stable.aws-efs-operator." + catalog.DefaultDomain
		bdName := install + "." + ns
		catalogsAPI(ctx)
		createNamespace(ctx, ns)

		By("the repository's Packages as an earlier release published them: each renders the BundleDeployment")
		pinned := pushWalkCatalog(ctx, "adopt", "")
		Expect(harness.KctrlRepositoryAdd(ctx, env.ControlPlane.Config, ns, "efs", pinned)).To(Succeed())
		var published []datav1alpha1.Package
		Eventually(func(g Gomega) {
			list := &datav1alpha1.PackageList{}
			g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
			g.Expect(list.Items).To(HaveLen(4))
			published = list.Items
		}).WithContext(ctx).Should(Succeed())
		// The repository's Packages are kapp-controller's: the ones of the
		// earlier release are made alongside them, by hand, under another
		// refName, as that release's catalog published them.
		legacyRef := "earlier." + ref
		for _, p := range published {
			legacy := earlierPackage(p, legacyRef)
			Expect(env.Client.Create(ctx, legacy)).To(Succeed())
			DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(env.Client.Delete(ctx, legacy))).To(Succeed()) })
		}
		DeferCleanup(func(ctx context.Context) {
			Expect(harness.KctrlInstalledDelete(ctx, env.ControlPlane.Config, ns, install)).To(Succeed())
		})
		By("kctrl package install -i efs -p " + legacyRef + " --version 1.0.0: the BundleDeployment its template renders, installed")
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlPackageInstall(ctx, env.ControlPlane.Config, harness.KctrlInstall{Namespace: ns, Name: install, Package: legacyRef, Version: "1.0.0",
				Values: []byte("installNamespace: " + installNS + "\n")})
		})).To(Succeed())
		bd := &rukpakv1alpha2.BundleDeployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		Expect(bd.Labels).To(HaveKey("kapp.k14s.io/app"), "kapp deployed it")
		Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationInstall, install))
		Expect(installedAt(bd)).To(BeTrue(), "%+v", bd.Status.Conditions)
		By("the catalog's conditions as that release reported them on the BundleDeployment")
		reported := bd.DeepCopy()
		meta.SetStatusCondition(&reported.Status.Conditions, metav1.Condition{Type: "UpgradeAvailable", Status: metav1.ConditionTrue, Reason: "UpgradeAvailable",
			Message: "Channel stable offers 2.0.0 beyond 1.0.0", ObservedGeneration: bd.Generation})
		Expect(env.Client.Status().Patch(ctx, reported, client.MergeFrom(bd))).To(Succeed())
		deployment := &appsv1.Deployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: installNS, Name: "aws-efs-operator"}, deployment)).To(Succeed())
		before := efsUIDs(ctx, bdName, installNS)
		generations := map[string]int64{"bd": bd.Generation, "deployment": deployment.Generation}
		app := catalogApp(ctx, bdName)
		appGeneration := app.Generation

		By("the catalog publishes this release's Packages (their template renders an OperatorInstall): kapp-controller renders it, and the OperatorInstall adopts the BundleDeployment")
		for _, p := range published {
			legacy := &datav1alpha1.Package{}
			Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: legacyRef + "." + p.Spec.Version}, legacy)).To(Succeed())
			legacy.Spec.Template = p.Spec.Template
			Expect(env.Client.Update(ctx, legacy)).To(Succeed())
		}
		Eventually(func(g Gomega) {
			oi := &catalogsv1alpha1.OperatorInstall{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: install}, oi)).To(Succeed())
			g.Expect(oi.Status.Installed).NotTo(BeNil())
			g.Expect(oi.Status.Installed).To(HaveField("Version", "1.0.0"))
			g.Expect(installIsInstalled(ctx, ns, install)).To(BeTrue(), "%+v", oi.Status.Conditions)
			g.Expect(reconciled(ctx, ns, install)).To(BeTrue())
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
			g.Expect(bd.Annotations).To(HaveKeyWithValue(catalog.AnnotationOperatorInstall, ns+"/"+install))
			g.Expect(meta.FindStatusCondition(bd.Status.Conditions, "UpgradeAvailable")).To(BeNil(), "the BundleDeployment carries rukpak's conditions only")
		}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
		Expect(bd.Labels).NotTo(HaveKey("kapp.k14s.io/app"), "kapp's deploy of the install no longer sees it")
		Expect(bd.Annotations).NotTo(HaveKey(catalog.AnnotationInstall))
		Expect(efsUIDs(ctx, bdName, installNS)).To(Equal(before), "nothing deleted or recreated")
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: installNS, Name: "aws-efs-operator"}, deployment)).To(Succeed())
		Expect(map[string]int64{"bd": bd.Generation, "deployment": deployment.Generation}).To(Equal(generations),
			"nothing restarted: the operator's Deployment is as it was; the BundleDeployment's image was %+v, is %+v", *reported.Spec.Source.Image, *bd.Spec.Source.Image)
		Expect(catalogApp(ctx, bdName).Generation).To(Equal(appGeneration), "the App was not written again")
		Eventually(upgradeNotice).WithContext(ctx).WithArguments(ns, install).Should(HavePrefix("True " + catalogsv1alpha1.ReasonUpgradeAvailable))

		By("kctrl package installed update -i efs --version 1.1.0: it upgrades as any install")
		Expect(kctrl(ctx, func(ctx context.Context) error {
			return harness.KctrlInstalledUpdate(ctx, env.ControlPlane.Config, ns, install, "1.1.0")
		})).To(Succeed())
		Expect(installedVersion(ctx, ns, install)).To(Equal("1.1.0"))
		after := efsUIDs(ctx, bdName, installNS)
		Expect(after["bd"]).To(Equal(before["bd"]))
		Expect(after["deployment"]).To(Equal(before["deployment"]))

		By("kubectl delete operatorinstall efs --cascade=orphan: the install goes, its BundleDeployment and what that installed stay")
		oi := &catalogsv1alpha1.OperatorInstall{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: install}, oi)).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			// kctrl's delete (above, after this) removes a recreated install and its
			// BundleDeployment; one orphaned for good is removed here.
			Expect(client.IgnoreNotFound(env.Client.Delete(ctx, &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: bdName}}))).To(Succeed())
		})
		Expect(env.Client.Delete(ctx, oi, client.PropagationPolicy(metav1.DeletePropagationOrphan))).To(Succeed())
		Eventually(func(g Gomega) {
			now := &catalogsv1alpha1.OperatorInstall{}
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: install}, now)
			if err == nil {
				// kapp-controller may render the install again: a new one.
				g.Expect(now.UID).NotTo(Equal(oi.UID), "the install orphaned is gone")
			} else {
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
			}
		}).WithContext(ctx).Should(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: bdName}, bd)).To(Succeed())
		Expect(bd.DeletionTimestamp).To(BeNil())
		Expect(efsUIDs(ctx, bdName, installNS)).To(Equal(after), "the delete orphaned everything the install had")
	}, SpecTimeout(6*time.Minute))
})

// earlierPackage is p as a catalog Package of a release before
// OperatorInstalls, under refName: its template renders the
// BundleDeployment itself, with the install's values as its annotations,
// and kapp waits for its Installed condition. The rest of p's App spec is
// as that release had it: the images bundle fetched, and kbld setting the
// bundle image (there the BundleDeployment's) from the bundle's lock.
func earlierPackage(p datav1alpha1.Package, refName string) *datav1alpha1.Package {
	e, ok := catalog.EntryOf(p.Labels, p.Annotations)
	ExpectWithOffset(1, ok).To(BeTrue())
	e.RefName = refName
	image, err := catalog.ImageOf(p.Annotations, nil)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ann := maps.Clone(p.Annotations)
	maps.Copy(ann, e.Annotations())
	var entry strings.Builder
	for _, k := range slices.Sorted(maps.Keys(e.Annotations())) {
		fmt.Fprintf(&entry, "    %s: %q\n", k, e.Annotations()[k])
	}
	bd := `#@ load("@ytt:data", "data")
#@ v = data.values
#@ if v.createNamespace:
---
apiVersion: v1
kind: Namespace
metadata:
  name: #@ v.installNamespace
  annotations:
    kapp.k14s.io/create-strategy: fallback-on-update
    kapp.k14s.io/delete-strategy: orphan
#@ end
---
apiVersion: core.rukpak.io/v1alpha2
kind: BundleDeployment
metadata:
  name: #@ "{}.{}".format(v.app.name, v.app.namespace)
  labels:
    ` + catalog.LabelPackage + `: ` + fmt.Sprintf("%q", e.Package) + `
  annotations:
` + entry.String() + `    core.rukpak.io/install-with: app
    ` + catalog.AnnotationPackagesNS + `: #@ v.app.namespace
    ` + catalog.AnnotationInstall + `: #@ v.app.name
    ` + catalog.AnnotationUpgradeEdge + `: CatalogProvided
    ` + catalog.AnnotationInstallDependencies + `: "true"
    ` + catalog.AnnotationUpgradeApproval + `: Automatic
    ` + catalog.AnnotationApprovedVersion + `: ""
spec:
  provisionerClassName: core-rukpak-io-registry
  installNamespace: #@ v.installNamespace
  source:
    type: image
    image:
      ref: ` + fmt.Sprintf("%q", image) + `
`
	schema := `#@data/values-schema
---
app:
  name: ""
  namespace: ""
installNamespace: ` + fmt.Sprintf("%q", e.Package) + `
createNamespace: true
`
	kappConfig := `apiVersion: kapp.k14s.io/v1alpha1
kind: Config
waitRules:
- resourceMatchers:
  - apiVersionKindMatcher: {apiVersion: core.rukpak.io/v1alpha2, kind: BundleDeployment}
  conditionMatchers:
  - {type: Installed, status: "False", failure: true, supportsObservedGeneration: true}
  - {type: Installed, status: "True", success: true, supportsObservedGeneration: true}
`
	spec := p.Spec.Template.Spec.DeepCopy()
	paths := spec.Fetch[0].Inline.Paths
	ExpectWithOffset(1, paths).To(HaveKey("operatorinstall.yml"))
	delete(paths, "operatorinstall.yml")
	paths["bundledeployment.yml"], paths["values-schema.yml"], paths["kapp-config.yml"] = bd, schema, kappConfig
	if overlay, ok := paths["images-lock.yml"]; ok {
		paths["images-lock.yml"] = strings.Replace(overlay, `"kind": "OperatorInstall"`, `"kind": "BundleDeployment"`, 1)
		ExpectWithOffset(1, paths["kbld-config.yml"]).To(ContainSubstring("path: [spec, image]"))
		paths["kbld-config.yml"] = strings.Replace(paths["kbld-config.yml"], "path: [spec, image]", "path: [spec, source, image, ref]", 1)
	}
	// That release's deploy had no filter: kapp deployed the BundleDeployment.
	spec.Deploy = []kappctrlv1alpha1.AppDeploy{{Kapp: &kappctrlv1alpha1.AppDeployKapp{}}}
	out := &datav1alpha1.Package{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: refName + "." + p.Spec.Version, Labels: maps.Clone(p.Labels), Annotations: ann},
		Spec:       datav1alpha1.PackageSpec{RefName: refName, Version: p.Spec.Version, Template: datav1alpha1.AppTemplateSpec{Spec: spec}},
	}
	out.Spec.ValuesSchema = p.Spec.ValuesSchema
	return out
}
