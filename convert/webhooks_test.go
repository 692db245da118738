package convert

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const webhookDefs = `  webhookdefinitions:
  - type: ValidatingAdmissionWebhook
    generateName: vdemo.example.com
    deploymentName: demo-operator
    containerPort: 443
    targetPort: 9443
    webhookPath: /validate
    admissionReviewVersions: [v1]
    sideEffects: None
    failurePolicy: Fail
    rules:
    - apiGroups: [example.com]
      apiVersions: [v1]
      operations: [CREATE]
      resources: [demos]
  - type: ConversionWebhook
    generateName: cdemo.example.com
    deploymentName: demo-operator
    containerPort: 443
    targetPort: 9443
    webhookPath: /convert
    admissionReviewVersions: [v1]
    sideEffects: None
    conversionCRDs: [demos.example.com]
`

func TestWebhooks(t *testing.T) {
	t.Parallel()
	b := csvBundle(map[string]bool{"AllNamespaces": true, "OwnNamespace": true}, webhookDefs)
	objs, err := Objects(b, Options{InstallNamespace: "op-ns", Certificates: fixedCerts()})
	if err != nil {
		t.Fatal(err)
	}
	svc := find(objs, "Service", "op-ns")
	var webhookSvc *unstructured.Unstructured
	for _, s := range svc {
		if s.GetName() == "demo-operator-service" {
			webhookSvc = s
		}
	}
	if webhookSvc == nil {
		t.Fatalf("no webhook Service in %v", keys(objs))
	}
	ports, _, _ := unstructured.NestedSlice(webhookSvc.Object, "spec", "ports")
	if len(ports) != 1 || ports[0].(map[string]any)["targetPort"] != int64(9443) {
		t.Errorf("one port 443→9443 expected (two definitions share it), got %v", ports)
	}
	secrets := find(objs, "Secret", "op-ns")
	if len(secrets) != 1 || secrets[0].GetName() != "demo-operator-service-cert" {
		t.Fatalf("serving Secret: %v", keys(secrets))
	}
	certPEM, _ := base64.StdEncoding.DecodeString(mustString(t, secrets[0], "data", "tls.crt"))

	vwcs := find(objs, "ValidatingWebhookConfiguration", "")
	if len(vwcs) != 1 || vwcs[0].GetName() != "vdemo.example.com" {
		t.Fatalf("ValidatingWebhookConfiguration: %v", keys(objs))
	}
	if !strings.Contains(vwcs[0].GetAnnotations()[changeRule], operatorsUp) {
		t.Errorf("the webhook must wait for the operator: %v", vwcs[0].GetAnnotations())
	}
	hooks, _, _ := unstructured.NestedSlice(vwcs[0].Object, "webhooks")
	cc := hooks[0].(map[string]any)["clientConfig"].(map[string]any)
	verify(t, cc["caBundle"].(string), certPEM, "demo-operator-service.op-ns.svc")
	if svcRef := cc["service"].(map[string]any); svcRef["path"] != "/validate" || svcRef["namespace"] != "op-ns" {
		t.Errorf("service reference: %v", svcRef)
	}
	if _, ok := hooks[0].(map[string]any)["namespaceSelector"]; ok {
		t.Error("an all-namespaces operator's webhook must not be limited to some namespaces")
	}

	crd := find(objs, "CustomResourceDefinition", "")[0]
	conv, _, _ := unstructured.NestedMap(crd.Object, "spec", "conversion")
	if conv["strategy"] != "Webhook" {
		t.Fatalf("CRD conversion not set: %v", conv)
	}
	ccc := conv["webhook"].(map[string]any)["clientConfig"].(map[string]any)
	verify(t, ccc["caBundle"].(string), certPEM, "demo-operator-service.op-ns.svc")

	dep := find(objs, "Deployment", "op-ns")[0]
	mounts, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	if !strings.Contains(stringOf(mounts), webhookCertDir) || !strings.Contains(stringOf(mounts), apiserviceCertDir) {
		t.Errorf("certificate not mounted: %v", mounts)
	}
	if dep.GetAnnotations()[changeGroup] != operatorsUp {
		t.Errorf("Deployment change group: %v", dep.GetAnnotations())
	}
}

func TestWebhooks_NamespacedAndRefused(t *testing.T) {
	t.Parallel()
	onlyValidating := strings.Split(webhookDefs, "  - type: ConversionWebhook")[0]
	objs, err := Objects(csvBundle(map[string]bool{"OwnNamespace": true}, onlyValidating), Options{InstallNamespace: "op-ns", Certificates: fixedCerts()})
	if err != nil {
		t.Fatal(err)
	}
	hooks, _, _ := unstructured.NestedSlice(find(objs, "ValidatingWebhookConfiguration", "")[0].Object, "webhooks")
	if sel := stringOf(hooks[0].(map[string]any)["namespaceSelector"]); !strings.Contains(sel, "op-ns") {
		t.Errorf("an own-namespace operator's webhook must only see its namespace, got %s", sel)
	}
	_, err = Objects(csvBundle(map[string]bool{"OwnNamespace": true}, webhookDefs), Options{InstallNamespace: "op-ns", Certificates: fixedCerts()})
	if err == nil || !strings.Contains(err.Error(), "conversion webhook cdemo.example.com needs the operator to watch all namespaces") {
		t.Errorf("error = %v", err)
	}
}

func verify(t *testing.T, caB64 string, certPEM []byte, dnsName string) {
	t.Helper()
	ca, err := base64.StdEncoding.DecodeString(caB64)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("caBundle holds no certificate")
	}
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatal("tls.crt is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: dnsName}); err != nil {
		t.Errorf("caBundle does not verify the serving certificate for %s: %v", dnsName, err)
	}
}

func mustString(t *testing.T, o *unstructured.Unstructured, fields ...string) string {
	t.Helper()
	v, ok, err := unstructured.NestedString(o.Object, fields...)
	if !ok || err != nil {
		t.Fatalf("%v missing: %v", fields, err)
	}
	return v
}

func stringOf(v any) string {
	data, _ := Marshal(&unstructured.Unstructured{Object: map[string]any{"v": v}})
	return string(data)
}
