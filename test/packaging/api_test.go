package packaging_test

import (
	"context"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ = Describe("the packaging API", func() {
	It("is kapp-controller's aggregated API server, storing Packages as InternalPackages", func(ctx context.Context) {
		By("finding no stand-in CRD for the data.packaging.carvel.dev kinds")
		for _, name := range []string{"packages.data.packaging.carvel.dev", "packagemetadatas.data.packaging.carvel.dev"} {
			err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &apiextensionsv1.CustomResourceDefinition{})
			Expect(apierrors.IsNotFound(err)).To(BeTrue(), "CRD %s: %v", name, err)
		}
		apiService := &unstructured.Unstructured{}
		apiService.SetAPIVersion("apiregistration.k8s.io/v1")
		apiService.SetKind("APIService")
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: "v1alpha1.data.packaging.carvel.dev"}, apiService)).To(Succeed())
		caBundle, _, _ := unstructured.NestedString(apiService.Object, "spec", "caBundle")
		Expect(caBundle).NotTo(BeEmpty(), "kapp-controller writes its serving CA into the APIService")

		const ns = "api-roundtrip"
		Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		By("creating a PackageMetadata and a Package through the aggregated API")
		meta := &datav1alpha1.PackageMetadata{
			ObjectMeta: metav1.ObjectMeta{Name: "hello.bundles.rukpak-kapp.dev", Namespace: ns},
			Spec:       datav1alpha1.PackageMetadataSpec{DisplayName: "hello", ShortDescription: "a round trip"},
		}
		Expect(env.Client.Create(ctx, meta)).To(Succeed())
		pkg := &datav1alpha1.Package{
			ObjectMeta: metav1.ObjectMeta{Name: "hello.bundles.rukpak-kapp.dev.1.2.3", Namespace: ns},
			Spec: datav1alpha1.PackageSpec{
				RefName: "hello.bundles.rukpak-kapp.dev", Version: "1.2.3",
				Template: datav1alpha1.AppTemplateSpec{Spec: &kappctrlv1alpha1.AppSpec{
					Fetch:    []kappctrlv1alpha1.AppFetch{{Inline: &kappctrlv1alpha1.AppFetchInline{Paths: map[string]string{"manifests/cm.yaml": "kind: ConfigMap"}}}},
					Template: []kappctrlv1alpha1.AppTemplate{{Ytt: &kappctrlv1alpha1.AppTemplateYtt{}}},
					Deploy:   []kappctrlv1alpha1.AppDeploy{{Kapp: &kappctrlv1alpha1.AppDeployKapp{}}},
				}},
			},
		}
		Expect(env.Client.Create(ctx, pkg)).To(Succeed())

		By("reading them back")
		gotMeta := &datav1alpha1.PackageMetadata{}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(meta), gotMeta)).To(Succeed())
		Expect(gotMeta.Spec.DisplayName).To(Equal("hello"))
		got := &datav1alpha1.Package{}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pkg), got)).To(Succeed())
		Expect(got.Spec.RefName).To(Equal(pkg.Spec.RefName))
		Expect(got.Spec.Version).To(Equal("1.2.3"))
		Expect(got.Spec.Template.Spec.Fetch[0].Inline.Paths).To(HaveKeyWithValue("manifests/cm.yaml", "kind: ConfigMap"))

		By("finding the Package stored as an internalpackages.internal.packaging.carvel.dev object")
		internal := &unstructured.UnstructuredList{}
		internal.SetAPIVersion("internal.packaging.carvel.dev/v1alpha1")
		internal.SetKind("InternalPackageList")
		Expect(env.Client.List(ctx, internal, client.InNamespace(ns))).To(Succeed())
		Expect(internal.Items).To(HaveLen(1))
		ref, _, _ := unstructured.NestedString(internal.Items[0].Object, "spec", "refName")
		Expect(ref).To(Equal(pkg.Spec.RefName))

		By("having the API server validate as kapp-controller does, which no stand-in CRD did")
		bad := pkg.DeepCopy()
		bad.ResourceVersion = ""
		bad.Name = "hello.bundles.rukpak-kapp.dev.1.2.4"
		err := env.Client.Create(ctx, bad)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err).To(MatchError(ContainSubstring("must be <spec.refName> + '.' + <spec.version>")))
	})
})
