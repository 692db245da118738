package reconciler_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// dependsOn is a metadata/dependencies.yaml declaring deps.
func dependsOn(deps string) map[string]string {
	return map[string]string{"metadata/dependencies.yaml": "dependencies:\n" + deps}
}

// widgetCRD serves widgets.deps.example.com/v1, as another operator's
// install would.
func widgetCRD(ctx context.Context) {
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.deps.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "deps.example.com", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptrTo(true)}}}},
		},
	}
	Expect(env.Client.Create(ctx, crd)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, crd) })
}

func ptrTo[T any](v T) *T { return &v }

var _ = Describe("registry+v1 dependencies", func() {
	const gvkDep = "- type: olm.gvk\n  value: {group: deps.example.com, kind: Widget, version: v1}\n"

	It("waits for an API it needs, naming it, and installs once the API is served, without an edit", func(ctx context.Context) {
		const name = "deps-gvk"
		ref := bdtest.BundleWith("deps/gvk:v1", dependsOn(gvkDep), "rukpak-bundles", "registry", "valid")
		bdtest.RegistryBD(ctx, name, ref, name)
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "False", "DependenciesUnmet",
			"the cluster does not serve Widget (deps.example.com/v1)"))
		_, err := bdtest.GetApp(ctx, name)
		Expect(err).To(MatchError(ContainSubstring("not found")), "nothing is installed while a dependency is unmet")

		By("the wait costs nothing: 20 edits of an App of no bundle and of an App of another package reconcile nothing")
		unrelated := []*kappctrlv1alpha1.App{
			{ObjectMeta: objectMeta(harness.SystemNamespace, "unrelated-plain")},
			{ObjectMeta: metav1.ObjectMeta{Namespace: harness.SystemNamespace, Name: "unrelated-etcd",
				Annotations: map[string]string{rukpakv1alpha2.AnnotationBundleMetadata: `{"package":{"name":"etcd","version":"0.9.4"}}`}}},
		}
		for _, app := range unrelated {
			app.Spec = kappctrlv1alpha1.AppSpec{Paused: true, ServiceAccountName: "none", Fetch: []kappctrlv1alpha1.AppFetch{{Inline: &kappctrlv1alpha1.AppFetchInline{}}},
				Template: []kappctrlv1alpha1.AppTemplate{{Ytt: &kappctrlv1alpha1.AppTemplateYtt{}}}, Deploy: []kappctrlv1alpha1.AppDeploy{{Kapp: &kappctrlv1alpha1.AppDeployKapp{}}}}
			Expect(env.Client.Create(ctx, app)).To(Succeed())
			DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, app) })
		}
		before := reconcilesOf(name)
		Expect(before).To(BeNumerically(">", 0), "the count sees the BundleDeployment's reconciles")
		for i := range 20 {
			for _, app := range unrelated {
				Expect(env.Client.Patch(ctx, app, client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"annotations":{"edit":"%d"}}}`, i))))).To(Succeed())
			}
		}
		// Once the adapter's cache holds the last edit, its informer has
		// handed every edit to the watches' handlers.
		for _, app := range unrelated {
			Eventually(func() (string, error) {
				seen := &kappctrlv1alpha1.App{}
				err := adapterCache.Get(ctx, client.ObjectKeyFromObject(app), seen)
				return seen.Annotations["edit"], err
			}).Should(Equal("19"))
		}
		Consistently(func() int { return reconcilesOf(name) }).WithTimeout(time.Second).Should(Equal(before), "an unrelated App's events woke the waiting BundleDeployment")

		widgetCRD(ctx)
		appFor(ctx, name, 1)
		appSucceeded(ctx, name, "")
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))
	})

	It("waits for a package another BundleDeployment installs, and installs once it is deployed", func(ctx context.Context) {
		const provider, consumer = "deps-provider", "deps-consumer"
		pkgDep := "- type: olm.package\n  value: {packageName: prometheus, version: '>=0.40.0 <1.0.0'}\n"
		bdtest.RegistryBD(ctx, consumer, bdtest.BundleWith("deps/consumer:v1", dependsOn(pkgDep), "rukpak-bundles", "registry", "valid"), consumer)
		Eventually(bdtest.GetBD(ctx, consumer)).Should(bdtest.HaveCondition("Installed", "False", "DependenciesUnmet",
			`package prometheus at a version in the range ">=0.40.0 <1.0.0" is not installed`))

		ref, _, err := env.Registry.PushDir(bdtest.Testdata("rukpak-bundles", "registry", "valid"), "deps/provider:v1")
		Expect(err).NotTo(HaveOccurred())
		bdtest.RegistryBD(ctx, provider, ref, provider)
		appFor(ctx, provider, 1)
		Consistently(bdtest.GetBD(ctx, consumer)).WithTimeout(2*time.Second).Should(bdtest.HaveCondition("Installed", "False", "DependenciesUnmet", ""),
			"a provider written but not yet deployed meets nothing")
		appSucceeded(ctx, provider, "")
		appFor(ctx, consumer, 1)
		appSucceeded(ctx, consumer, "")
		Eventually(bdtest.GetBD(ctx, consumer)).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))
	})

	It("installs without checking when the BundleDeployment says so, as rukpak did", func(ctx context.Context) {
		const name = "deps-skipped"
		ref := bdtest.BundleWith("deps/skipped:v1", dependsOn(gvkDep), "rukpak-bundles", "registry", "valid")
		bdtest.RegistryBD(ctx, name, ref, name, func(bd *rukpakv1alpha2.BundleDeployment) {
			bd.Annotations = map[string]string{rukpakv1alpha2.AnnotationSkipDependencyCheck: "true"}
		})
		appFor(ctx, name, 1)
		appSucceeded(ctx, name, "")
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))
	})
})
