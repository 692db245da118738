package api_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// deadConversionCRD serves versions (the first one stored) and names a
// conversion webhook whose Service does not exist, as kubebuilder's
// scaffolding leaves it: no caBundle (cert-manager would inject one).
func deadConversionCRD(kind string, versions ...string) *apiextensionsv1.CustomResourceDefinition {
	plural := strings.ToLower(kind) + "s"
	yes := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".conversion.test"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "conversion.test", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural},
			Conversion: &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{
					ConversionReviewVersions: []string{"v1"},
					ClientConfig: &apiextensionsv1.WebhookClientConfig{
						Service: &apiextensionsv1.ServiceReference{Namespace: "system", Name: "webhook-service", Path: ptrTo("/convert")},
					},
				},
			},
		},
	}
	for i, v := range versions {
		crd.Spec.Versions = append(crd.Spec.Versions, apiextensionsv1.CustomResourceDefinitionVersion{
			Name: v, Served: true, Storage: i == 0,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &yes}},
		})
	}
	return crd
}

func ptrTo[T any](v T) *T { return &v }

func deadObject(kind, version, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "conversion.test", Version: version, Kind: kind})
	u.SetNamespace("default")
	u.SetName(name)
	u.Object["spec"] = map[string]any{"some": "value"}
	return u
}

func deadList(kind, version string) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(schema.GroupVersionKind{Group: "conversion.test", Version: version, Kind: kind + "List"})
	return l
}

// What kube-apiserver does with a CRD whose conversion webhook does not
// exist decides how the converter treats such CRDs in registry+v1 bundles
// (convert/conversion.go): these specs pin that behaviour.
var _ = Describe("a CRD whose conversion webhook does not exist", Ordered, func() {
	establishedOf := func(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) func(g Gomega) *apiextensionsv1.CustomResourceDefinitionCondition {
		return func(g Gomega) *apiextensionsv1.CustomResourceDefinitionCondition {
			live := &apiextensionsv1.CustomResourceDefinition{}
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(crd), live)).To(Succeed())
			for _, c := range live.Status.Conditions {
				if c.Type == apiextensionsv1.Established {
					return &c
				}
			}
			return nil
		}
	}
	create := func(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) {
		Expect(env.Client.Create(ctx, crd)).To(Succeed(), "the API server accepts the dead webhook stanza")
		DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(env.Client.Delete(ctx, crd))).To(Succeed()) })
		Eventually(establishedOf(ctx, crd)).WithContext(ctx).WithTimeout(30 * time.Second).Should(HaveField("Status", apiextensionsv1.ConditionTrue))
	}

	It("with one version, is established and serves every request: the webhook is never called", func(ctx context.Context) {
		create(ctx, deadConversionCRD("Single", "v1"))
		obj := deadObject("Single", "v1", "one")
		Eventually(func() error { return env.Client.Create(ctx, obj) }).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		got := deadObject("Single", "v1", "one")
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(got), got)).To(Succeed())
		Expect(env.Client.List(ctx, deadList("Single", "v1"), client.InNamespace("default"))).To(Succeed())
		got.Object["spec"] = map[string]any{"changed": true}
		Expect(env.Client.Update(ctx, got)).To(Succeed())
		Expect(env.Client.Delete(ctx, got)).To(Succeed())
	})

	It("with a caBundle that holds no certificate, is never established, even with one version", func(ctx context.Context) {
		crd := deadConversionCRD("Placeholder", "v1")
		// stolostron 0.1.4 ships "XG4=", a backslash and an n.
		crd.Spec.Conversion.Webhook.ClientConfig.CABundle = []byte("\\n")
		Expect(env.Client.Create(ctx, crd)).To(Succeed(), "a CRD that is not established yet may carry any caBundle")
		DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(env.Client.Delete(ctx, crd))).To(Succeed()) })
		Eventually(establishedOf(ctx, crd)).WithContext(ctx).WithTimeout(30 * time.Second).Should(And(
			HaveField("Status", apiextensionsv1.ConditionFalse), HaveField("Reason", "InvalidCABundle")))
		Consistently(establishedOf(ctx, crd)).WithContext(ctx).WithTimeout(5 * time.Second).Should(HaveField("Status", apiextensionsv1.ConditionFalse))
		err := env.Client.List(ctx, deadList("Placeholder", "v1"), client.InNamespace("default"))
		Expect(meta.IsNoMatchError(err) || apierrors.IsNotFound(err)).To(BeTrue(), "the kind is not served: %v", err)
	})

	It("with several versions, serves the stored version and fails every read or write at another", func(ctx context.Context) {
		create(ctx, deadConversionCRD("Multi", "v1", "v1beta1"))
		stored := deadObject("Multi", "v1", "stored")
		Eventually(func() error { return env.Client.Create(ctx, stored) }).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(stored), deadObject("Multi", "v1", "stored"))).To(Succeed())
		Expect(env.Client.List(ctx, deadList("Multi", "v1"), client.InNamespace("default"))).To(Succeed())

		conversionFailed := MatchError(ContainSubstring("conversion webhook for conversion.test/"))
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(stored), deadObject("Multi", "v1beta1", "stored"))).To(conversionFailed, "read at the other version")
		Expect(env.Client.List(ctx, deadList("Multi", "v1beta1"), client.InNamespace("default"))).To(conversionFailed, "list at the other version")
		Expect(env.Client.Create(ctx, deadObject("Multi", "v1beta1", "other"))).To(conversionFailed, "write at the other version")
		fmt.Fprintln(GinkgoWriter, "reads and writes at v1beta1 fail; v1, the stored version, works")
	})
})

// The BundleDeployment CRD names the adapter's conversion webhook. While it
// does not answer (no adapter yet, or none in this suite), everything at
// v1alpha2, the stored version, works; only v1alpha1 requests fail.
var _ = Describe("the BundleDeployment CRD while its conversion webhook does not answer", func() {
	It("serves every v1alpha2 request, and refuses v1alpha1 ones with the conversion error", func(ctx context.Context) {
		bd := validBD("no-conversion-webhook")
		Expect(env.Client.Create(ctx, bd)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(env.Client.Delete(ctx, bd))).To(Succeed()) })

		watchCtx, stop := context.WithCancel(ctx)
		defer stop()
		wc, err := client.NewWithWatch(env.ControlPlane.Config, client.Options{Scheme: env.Scheme})
		Expect(err).NotTo(HaveOccurred())
		w, err := wc.Watch(watchCtx, &rukpakv1alpha2.BundleDeploymentList{})
		Expect(err).NotTo(HaveOccurred())
		defer w.Stop()
		Eventually(w.ResultChan()).WithContext(ctx).Should(Receive(HaveField("Object", HaveField("ObjectMeta.Name", bd.Name))), "watched")

		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bd), bd)).To(Succeed())
		Expect(env.Client.List(ctx, &rukpakv1alpha2.BundleDeploymentList{})).To(Succeed())
		bd.Spec.Source.Image.Ref = "registry.example/bundles/plain:v2"
		Expect(env.Client.Update(ctx, bd)).To(Succeed())
		bd.Status.ObservedGeneration = bd.Generation
		Expect(env.Client.Status().Update(ctx, bd)).To(Succeed())
		patch := client.MergeFrom(bd.DeepCopy())
		bd.Labels = map[string]string{"patched": "yes"}
		Expect(env.Client.Patch(ctx, bd, patch)).To(Succeed())
		applied := validBD(bd.Name)
		applied.SetGroupVersionKind(rukpakv1alpha2.GroupVersion.WithKind("BundleDeployment"))
		Expect(env.Client.Patch(ctx, applied, client.Apply, client.FieldOwner("conversion-test"), client.ForceOwnership)).To(Succeed())

		conversionFailed := MatchError(ContainSubstring("conversion webhook for core.rukpak.io/v1alpha2, Kind=BundleDeployment failed"))
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(bd), &rukpakv1alpha1.BundleDeployment{})).To(conversionFailed)
		Expect(env.Client.List(ctx, &rukpakv1alpha1.BundleDeploymentList{})).To(conversionFailed)

		Expect(env.Client.Delete(ctx, bd)).To(Succeed())
	})
})
