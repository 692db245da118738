package e2e_test

import (
	"context"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// The CRD in examples/charts/hello-world/crds.
const greetingsCRD = "greetings.hello.rukpak-kapp.test"

func chartCRDLabels(ctx context.Context) (map[string]string, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	err := env.Client.Get(ctx, client.ObjectKey{Name: greetingsCRD}, crd)
	return crd.Labels, err
}

func greeting(ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hello.rukpak-kapp.test/v1", "kind": "Greeting",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec":     map[string]any{"text": "kept"},
	}}
}

var _ = Describe("a helm chart's crds/, kept as Helm keeps them", func() {
	It("are shared by two BundleDeployments of the chart and outlive both, with their custom resources", func(ctx context.Context) {
		ref, _, err := env.Registry.PushDir(filepath.Join(chartsDir, "hello-world"), "charts/hello-world:shared")
		Expect(err).NotTo(HaveOccurred())
		src := rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: ref}}
		other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "chart-crds-b"}}
		Expect(env.Client.Create(ctx, other)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, other) })
		helmBD(ctx, "chart-crds-a", src)
		helmBD(ctx, "chart-crds-b", src, func(bd *rukpakv1alpha2.BundleDeployment) { bd.Spec.InstallNamespace = other.Name })
		for _, bd := range []string{"chart-crds-a", "chart-crds-b"} {
			Eventually(getBD(ctx, bd)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		}
		Expect(chartCRDLabels(ctx)).NotTo(Or(HaveKey("kapp.k14s.io/app"), HaveKey(rukpakv1alpha2.LabelOwnerName)))
		Eventually(func() error { return env.Client.Create(ctx, greeting("default", "hello")) }).WithContext(ctx).Should(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, greeting("default", "hello")) })

		for _, bd := range []string{"chart-crds-a", "chart-crds-b"} {
			By("deleting " + bd)
			deleteAndWait(ctx, bd)
			Expect(env.Client.Get(ctx, client.ObjectKey{Name: greetingsCRD}, &apiextensionsv1.CustomResourceDefinition{})).To(Succeed())
			Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(greeting("default", "hello")), greeting("", ""))).To(Succeed())
		}
	})

	// What an App of an earlier version left: the chart CRD owned by kapp
	// for the BundleDeployment (kapp's label and the owner labels).
	It("let go of a chart CRD an App of an earlier version owned, deleting nothing", func(ctx context.Context) {
		if err := env.Client.Get(ctx, client.ObjectKey{Name: greetingsCRD}, &apiextensionsv1.CustomResourceDefinition{}); apierrors.IsNotFound(err) {
			data, err := os.ReadFile(filepath.Join(chartsDir, "hello-world", "crds", "greetings.yaml"))
			Expect(err).NotTo(HaveOccurred())
			_, err = harness.ApplyYAML(ctx, env.Client, data)
			Expect(err).NotTo(HaveOccurred())
		}
		const bd = "chart-crds-old"
		labels := `{"metadata":{"labels":{"kapp.k14s.io/app":"1700000000000000000","kapp.k14s.io/association":"v1.0","core.rukpak.io/owner-kind":"BundleDeployment","core.rukpak.io/owner-name":"` + bd + `"}}}`
		Expect(env.Client.Patch(ctx, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: greetingsCRD}},
			client.RawPatch(types.MergePatchType, []byte(labels)))).To(Succeed())
		ref, _, err := env.Registry.PushDir(filepath.Join(chartsDir, "hello-world"), "charts/hello-world:old")
		Expect(err).NotTo(HaveOccurred())
		helmBD(ctx, bd, rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: ref}})
		Eventually(getBD(ctx, bd)).Should(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		Eventually(chartCRDLabels).WithContext(ctx).Should(Not(Or(HaveKey("kapp.k14s.io/app"), HaveKey(rukpakv1alpha2.LabelOwnerName))))
		deleteAndWait(ctx, bd)
		Expect(env.Client.Get(ctx, client.ObjectKey{Name: greetingsCRD}, &apiextensionsv1.CustomResourceDefinition{})).To(Succeed())
	})
})
