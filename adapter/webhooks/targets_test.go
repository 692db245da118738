package webhooks

import (
	"bytes"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestCRDConversion_Inject(t *testing.T) {
	webhookCRD := func(bundle []byte) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
				Webhook: &apiextensionsv1.WebhookConversion{ClientConfig: &apiextensionsv1.WebhookClientConfig{CABundle: bundle}}}}}
	}
	ca := []byte("ca")
	for _, tc := range []struct {
		name    string
		crd     *apiextensionsv1.CustomResourceDefinition
		changed bool
		want    []byte
	}{
		{name: "a webhook without the CA gets it", crd: webhookCRD(nil), changed: true, want: ca},
		{name: "another CA is replaced", crd: webhookCRD([]byte("old")), changed: true, want: ca},
		{name: "the CA already there is left alone", crd: webhookCRD(ca), want: ca},
		{name: "no conversion: nothing to inject", crd: &apiextensionsv1.CustomResourceDefinition{}},
		{name: "strategy None: nothing to inject", crd: &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}}}},
		{name: "a webhook without a client config: nothing to inject", crd: &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter, Webhook: &apiextensionsv1.WebhookConversion{}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := CRDConversion("bundledeployments.core.rukpak.io")
			if target.Object.GetName() != "bundledeployments.core.rukpak.io" {
				t.Fatalf("target names %q", target.Object.GetName())
			}
			if got := target.Inject(tc.crd, ca); got != tc.changed {
				t.Fatalf("changed = %v, want %v", got, tc.changed)
			}
			var got []byte
			if c := tc.crd.Spec.Conversion; c != nil && c.Webhook != nil && c.Webhook.ClientConfig != nil {
				got = c.Webhook.ClientConfig.CABundle
			}
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("caBundle = %q, want %q", got, tc.want)
			}
		})
	}
}
