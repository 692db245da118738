package convert

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// shippedWebhookService mirrors operators that name their webhook Service
// after the webhook Deployment plus "-service", which is the name OLM (and
// the converter) gives the Service it generates for that Deployment.
const shippedWebhookService = `apiVersion: v1
kind: Service
metadata:
  name: demo-operator-service
  labels: {app.kubernetes.io/component: webhook}
  annotations: {service.beta.openshift.io/serving-cert-secret-name: demo-webhook-cert}
spec:
  selector: {app.kubernetes.io/component: webhook}
  ports:
  - {name: https, port: 443, protocol: TCP, targetPort: server-port}
  - {name: metrics, port: 8383, targetPort: 8383}
`

// OLM applies its webhook Service over the bundle's with server-side apply:
// its selector (an atomic map) and its ports (by port and protocol) win,
// the rest of the bundle's Service stays. The converter does the same and
// says so.
func TestShippedServiceNamedLikeTheWebhookService(t *testing.T) {
	t.Parallel()
	b := csvBundle(map[string]bool{"AllNamespaces": true}, webhookDefs)
	b["manifests/webhook-service.yaml"] = []byte(shippedWebhookService)
	r, err := Convert(b, Options{InstallNamespace: "op-ns", Certificates: fixedCerts()})
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	var svc *unstructured.Unstructured
	for _, o := range find(r.Objects, "Service", "op-ns") {
		if o.GetName() == "demo-operator-service" {
			if svc != nil {
				t.Fatal("two Services named demo-operator-service")
			}
			svc = o
		}
	}
	if svc == nil {
		t.Fatalf("no webhook Service in %v", keys(r.Objects))
	}
	if svc.GetLabels()["app.kubernetes.io/component"] != "webhook" || svc.GetAnnotations()["service.beta.openshift.io/serving-cert-secret-name"] == "" {
		t.Errorf("the bundle's metadata must stay: %v %v", svc.GetLabels(), svc.GetAnnotations())
	}
	selector, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector")
	if diff := cmp.Diff(map[string]string{"app": "demo"}, selector); diff != "" {
		t.Errorf("selector must be the webhook Deployment's (-want +got):\n%s", diff)
	}
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	want := []any{
		map[string]any{"name": "443", "port": int64(443), "targetPort": int64(9443)},
		map[string]any{"name": "metrics", "port": int64(8383), "targetPort": int64(8383)},
	}
	if diff := cmp.Diff(want, ports); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "Service op-ns/demo-operator-service") || !strings.Contains(r.Notes[0], "the bundle's Service is kept") {
		t.Errorf("notes = %q, want one saying which Service is kept", r.Notes)
	}
}

// A shipped Service that already says what the generated one says is kept
// as it is, with a note.
func TestShippedServiceThatAgrees(t *testing.T) {
	t.Parallel()
	b := csvBundle(map[string]bool{"AllNamespaces": true}, webhookDefs)
	b["manifests/webhook-service.yaml"] = []byte("apiVersion: v1\nkind: Service\nmetadata: {name: demo-operator-service}\nspec:\n  selector: {app: demo}\n  ports: [{name: '443', port: 443, targetPort: 9443}]\n")
	r, err := Convert(b, Options{InstallNamespace: "op-ns", Certificates: fixedCerts()})
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	n := 0
	for _, o := range find(r.Objects, "Service", "op-ns") {
		if o.GetName() == "demo-operator-service" {
			n++
		}
	}
	if n != 1 || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "agrees") {
		t.Errorf("%d Services, notes %q", n, r.Notes)
	}
}
