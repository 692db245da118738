package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestReportTrouble(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("etcd.log", "started\n{\"level\":\"fatal\",\"msg\":\"failed to write\",\"error\":\"write /x/wal: no space left on device\"}\n")
	write("kube-apiserver.log", "I0101 serving\nE0101 an ordinary error the test expects\n")
	var many strings.Builder
	for range 20 {
		many.WriteString("listen tcp 127.0.0.1:4000: bind: address already in use\n")
	}
	write("registry.log", many.String())

	var out strings.Builder
	reportTrouble(&out, dir)
	got := out.String()
	if !strings.Contains(got, "etcd.log says:") || !strings.Contains(got, "no space left on device") {
		t.Errorf("the full disk is not told:\n%s", got)
	}
	if strings.Contains(got, "kube-apiserver.log") {
		t.Errorf("a log with ordinary errors only is told:\n%s", got)
	}
	if n := strings.Count(got, "address already in use"); n != troubleLimit {
		t.Errorf("registry.log told %d times, want %d", n, troubleLimit)
	}

	out.Reset()
	reportTrouble(&out, t.TempDir())
	if out.Len() != 0 {
		t.Errorf("an empty log directory says %q", out.String())
	}
}

func TestAPIServicesTrouble(t *testing.T) {
	svc := func(name, status, reason, message string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apiregistration.k8s.io/v1")
		u.SetKind("APIService")
		u.SetName(name)
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Available", "status": status, "reason": reason, "message": message}}, "status", "conditions")
		return u
	}
	s := runtime.NewScheme()
	gvk := schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}
	s.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
	s.AddKnownTypeWithName(gvk.GroupVersion().WithKind("APIServiceList"), &unstructured.UnstructuredList{})
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(
		svc("v1.apps", "True", "Local", "Local APIServices are always available"),
		svc("v1alpha1.data.packaging.carvel.dev", "False", "FailedDiscoveryCheck", "failing or missing response from https://10.0.0.5:41234: dial tcp 10.0.0.5:41234: i/o timeout"),
	).Build()
	got := apiServicesTrouble(context.Background(), c)
	if len(got) != 1 || !strings.Contains(got[0], "v1alpha1.data.packaging.carvel.dev is not Available: FailedDiscoveryCheck") || !strings.Contains(got[0], "i/o timeout") {
		t.Fatalf("apiServicesTrouble = %q", got)
	}
}
