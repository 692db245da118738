package convert

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// withDeadConversion adds what kubebuilder's conversion patch leaves in a
// CRD: a webhook in the "system" namespace that nothing creates.
func withDeadConversion(crd []byte) []byte {
	return []byte(strings.Replace(string(crd), "spec:\n", `spec:
  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        service: {namespace: system, name: webhook-service, path: /convert}
      conversionReviewVersions: [v1]
`, 1))
}

func withBadCA(crd []byte) []byte {
	return []byte(strings.Replace(string(crd), "      clientConfig:\n", "      clientConfig:\n        caBundle: XG4=\n", 1))
}

func conversionOf(t *testing.T, objs []*unstructured.Unstructured, name string) map[string]any {
	t.Helper()
	for _, o := range find(objs, "CustomResourceDefinition", "") {
		if o.GetName() == name {
			conv, _, _ := unstructured.NestedMap(o.Object, "spec", "conversion")
			return conv
		}
	}
	t.Fatalf("no CRD %s in %v", name, keys(objs))
	return nil
}

// With one served version the API server never calls the webhook, so the
// CRD works: it is installed, without the dead stanza, and a note says so.
func TestUndeclaredConversionSingleVersion(t *testing.T) {
	t.Parallel()
	b := csvBundle(map[string]bool{"AllNamespaces": true}, "")
	// A placeholder caBundle would keep it from being served at all.
	b["manifests/widgets.yaml"] = withBadCA(withDeadConversion(crdYAML("widgets", "example.com", "Widget", "v1")))
	// A version that is not served needs no conversion either.
	b["manifests/gadgets.yaml"] = withDeadConversion([]byte(strings.Replace(string(crdYAML("gadgets", "example.com", "Gadget", "v1", "v1alpha1")), "served: true\n    storage: false", "served: false\n    storage: false", 1)))
	r, err := Convert(b, Options{InstallNamespace: "op-ns"})
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	for _, name := range []string{"widgets.example.com", "gadgets.example.com"} {
		if conv := conversionOf(t, r.Objects, name); conv != nil {
			t.Errorf("%s: conversion = %v, want it dropped", name, conv)
		}
	}
	want := []string{
		"CustomResourceDefinition gadgets.example.com: its conversion webhook (service system/webhook-service), which the ClusterServiceVersion does not declare, is dropped: with the single served version v1 the API server never calls it",
		"CustomResourceDefinition widgets.example.com: its conversion webhook (service system/webhook-service), which the ClusterServiceVersion does not declare, is dropped: with the single served version v1 the API server never calls it (and its caBundle, which holds no certificate, would keep the CRD from being served at all)",
	}
	if diff := cmp.Diff(want, r.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

// With several versions and an operator that serves webhooks, the
// conversion goes to the operator's generated webhook Service, with the
// generated CA.
func TestUndeclaredConversionWiredToTheOperatorsWebhookService(t *testing.T) {
	t.Parallel()
	onlyValidating := strings.Split(webhookDefs, "  - type: ConversionWebhook")[0]
	b := csvBundle(map[string]bool{"AllNamespaces": true}, onlyValidating)
	b["manifests/widgets.yaml"] = withDeadConversion(crdYAML("widgets", "example.com", "Widget", "v1", "v1alpha1"))
	r, err := Convert(b, Options{InstallNamespace: "op-ns", Certificates: fixedCerts()})
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	conv := conversionOf(t, r.Objects, "widgets.example.com")
	cc, _, _ := unstructured.NestedMap(conv, "webhook", "clientConfig")
	svc, _ := cc["service"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"namespace": "op-ns", "name": "demo-operator-service", "path": "/convert", "port": int64(443)}, svc); diff != "" {
		t.Errorf("service (-want +got):\n%s", diff)
	}
	secret := find(r.Objects, "Secret", "op-ns")[0]
	certPEM, _ := base64.StdEncoding.DecodeString(mustString(t, secret, "data", "tls.crt"))
	verify(t, cc["caBundle"].(string), certPEM, "demo-operator-service.op-ns.svc")
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "is pointed at the webhook Service op-ns/demo-operator-service of Deployment demo-operator (path /convert)") {
		t.Errorf("notes = %q", r.Notes)
	}
	// Conversion is cluster-wide, like a declared conversion webhook.
	_, err = Convert(b, Options{InstallNamespace: "op-ns", WatchNamespaces: []string{"op-ns"}, Certificates: fixedCerts()})
	if err == nil || !strings.Contains(err.Error(), "converts between versions with the webhook server of Deployment demo-operator, which then needs to watch all namespaces") {
		t.Errorf("error = %v", err)
	}
}

// With several versions and no webhook server in the bundle, every read or
// write at a version but the stored one fails until something serves the
// webhook where the stanza says (an operand often does): the bundle
// installs with the stanza as shipped and a note per CRD.
func TestUndeclaredConversionUnservedIsKeptWithANote(t *testing.T) {
	t.Parallel()
	b := csvBundle(map[string]bool{"AllNamespaces": true}, "")
	b["manifests/alphas.yaml"] = withDeadConversion(crdYAML("alphas", "example.com", "Alpha", "v1", "v1beta1", "v1alpha1"))
	b["manifests/deltas.yaml"] = []byte(strings.Replace(string(withDeadConversion(crdYAML("deltas", "example.com", "Delta", "v2", "v1"))), "name: webhook-service", "name: other-service", 1))
	r, err := Convert(b, Options{InstallNamespace: "op-ns"})
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	for _, name := range []string{"alphas.example.com", "deltas.example.com"} {
		conv := conversionOf(t, r.Objects, name)
		if strategy := conv["strategy"]; strategy != "Webhook" {
			t.Errorf("%s: conversion strategy %v, want the stanza as shipped", name, strategy)
		}
	}
	want := []string{
		"CustomResourceDefinition alphas.example.com: its conversion webhook (service system/webhook-service), which the ClusterServiceVersion does not declare and no Deployment of the bundle serves, is kept as shipped: " +
			"until something serves it there (often the operand, once the operator runs), reads and writes at v1beta1, v1alpha1 fail; v1, the stored version, works",
		"CustomResourceDefinition deltas.example.com: its conversion webhook (service system/other-service), which the ClusterServiceVersion does not declare and no Deployment of the bundle serves, is kept as shipped: " +
			"until something serves it there (often the operand, once the operator runs), reads and writes at v1 fail; v2, the stored version, works",
	}
	if diff := cmp.Diff(want, r.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

// A caBundle that holds no certificate keeps the API server from ever
// serving the CRD, whoever serves the webhook: refused, in one problem
// however many CRDs it concerns.
func TestUndeclaredConversionWithAPlaceholderCAIsOneProblem(t *testing.T) {
	t.Parallel()
	b := csvBundle(map[string]bool{"AllNamespaces": true}, "")
	// stolostron 0.1.4 ships "XG4=" (a backslash and an n) as caBundle.
	for _, kind := range []string{"Epsilon", "Zeta"} {
		plural := strings.ToLower(kind) + "s"
		b["manifests/"+plural+".yaml"] = withBadCA(withDeadConversion(crdYAML(plural, "example.com", kind, "v1", "v1beta1")))
	}
	b["manifests/alphas.yaml"] = withDeadConversion(crdYAML("alphas", "example.com", "Alpha", "v1", "v1beta1"))
	_, err := Convert(b, Options{InstallNamespace: "op-ns"})
	var cerr *Error
	if !asError(err, &cerr) || len(cerr.Problems) != 1 {
		t.Fatalf("want one problem, got %v", err)
	}
	want := "2 CustomResourceDefinitions name a conversion webhook that the ClusterServiceVersion does not declare and no Deployment of the bundle serves, " +
		"with a caBundle that holds no certificate, so the API server would never serve them: service system/webhook-service for epsilons.example.com, zetas.example.com"
	if cerr.Problems[0] != want {
		t.Errorf("problem:\n got %s\nwant %s", cerr.Problems[0], want)
	}
}
