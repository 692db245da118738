package api_test

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// deadConversionCRD serves versions (the first one stored) and names a
// conversion webhook whose Service does not exist, with the garbage
// caBundle some published bundles ship (stolostron 0.1.4's "XG4=").
func deadConversionCRD(plural string, versions ...string) *apiextensionsv1.CustomResourceDefinition {
	yes := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".conversion.test"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "conversion.test", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Dead", ListKind: "DeadList", Plural: plural},
			Conversion: &apiextensionsv1.CustomResourceConversion{
				Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{
					ConversionReviewVersions: []string{"v1"},
					ClientConfig: &apiextensionsv1.WebhookClientConfig{
						CABundle: []byte("\\n"),
						Service:  &apiextensionsv1.ServiceReference{Namespace: "system", Name: "webhook-service", Path: ptrTo("/convert")},
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

func deadObject(plural, version, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "conversion.test", Version: version, Kind: "Dead"})
	u.SetNamespace("default")
	u.SetName(name)
	u.Object["spec"] = map[string]any{"plural": plural}
	return u
}

func deadList(version string) *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(schema.GroupVersionKind{Group: "conversion.test", Version: version, Kind: "DeadList"})
	return l
}

// What kube-apiserver does with a CRD whose conversion webhook does not
// exist decides how the converter treats such CRDs in registry+v1 bundles
// (convert/conversion.go): these specs pin that behaviour.
var _ = Describe("a CRD whose conversion webhook does not exist", Ordered, func() {
	create := func(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) {
		Expect(env.Client.Create(ctx, crd)).To(Succeed(), "the API server accepts the dead webhook stanza")
		Eventually(func(g Gomega) {
			live := &apiextensionsv1.CustomResourceDefinition{}
			g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(crd), live)).To(Succeed())
			established := false
			for _, c := range live.Status.Conditions {
				established = established || (c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue)
			}
			g.Expect(established).To(BeTrue(), "conditions: %+v", live.Status.Conditions)
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(env.Client.Delete(ctx, crd))).To(Succeed()) })
	}

	It("with one version, is established and serves every request: the webhook is never called", func(ctx context.Context) {
		create(ctx, deadConversionCRD("singles", "v1"))
		obj := deadObject("singles", "v1", "one")
		Eventually(func() error { return env.Client.Create(ctx, obj) }).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		got := deadObject("singles", "v1", "one")
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(got), got)).To(Succeed())
		Expect(env.Client.List(ctx, deadList("v1"), client.InNamespace("default"))).To(Succeed())
		got.Object["spec"] = map[string]any{"changed": true}
		Expect(env.Client.Update(ctx, got)).To(Succeed())
		Expect(env.Client.Delete(ctx, got)).To(Succeed())
	})

	It("with several versions, serves the stored version and fails every read or write at another", func(ctx context.Context) {
		create(ctx, deadConversionCRD("multis", "v1", "v1beta1"))
		stored := deadObject("multis", "v1", "stored")
		Eventually(func() error { return env.Client.Create(ctx, stored) }).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(stored), deadObject("multis", "v1", "stored"))).To(Succeed())
		Expect(env.Client.List(ctx, deadList("v1"), client.InNamespace("default"))).To(Succeed())

		conversionFailed := MatchError(ContainSubstring("conversion webhook for conversion.test/"))
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(stored), deadObject("multis", "v1beta1", "stored"))).To(conversionFailed, "read at the other version")
		Expect(env.Client.List(ctx, deadList("v1beta1"), client.InNamespace("default"))).To(conversionFailed, "list at the other version")
		Expect(env.Client.Create(ctx, deadObject("multis", "v1beta1", "other"))).To(conversionFailed, "write at the other version")
		fmt.Fprintln(GinkgoWriter, "reads and writes at v1beta1 fail; v1, the stored version, works")
	})
})
