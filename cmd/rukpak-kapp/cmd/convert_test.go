package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// convert registry-v1 --watch-namespaces "" asks for all namespaces, which
// a bundle supporting only its own namespace refuses; left out, the
// bundle's default (its own namespace) is taken.
func TestConvertRegistryV1_WatchAllNamespaces(t *testing.T) {
	t.Parallel()
	dir := ownNamespaceBundle(t)
	var out, errOut bytes.Buffer
	if code := Execute([]string{"convert", "registry-v1", dir, "--install-namespace", "ns"}, &out, &errOut); code != 0 {
		t.Fatalf("the bundle's default: exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "olm.targetNamespaces: ns") {
		t.Errorf("the default watches its own namespace:\n%s", out.String())
	}
	out.Reset()
	errOut.Reset()
	if code := Execute([]string{"convert", "registry-v1", dir, "--install-namespace", "ns", "--watch-namespaces", ""}, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), "AllNamespaces") {
		t.Errorf(`--watch-namespaces "" is all namespaces, which this bundle does not support: exit %d: %s`, code, errOut.String())
	}
}

// ownNamespaceBundle writes a registry+v1 bundle whose operator supports
// its own namespace only, and returns its directory.
func ownNamespaceBundle(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("metadata/annotations.yaml", "annotations:\n  operators.operatorframework.io.bundle.package.v1: own\n")
	write("manifests/csv.yaml", `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: own.v1.0.0
spec:
  installModes:
  - {type: OwnNamespace, supported: true}
  - {type: AllNamespaces, supported: false}
  install:
    strategy: deployment
    spec:
      deployments:
      - name: own
        spec:
          selector: {matchLabels: {app: own}}
          template:
            metadata: {labels: {app: own}}
            spec:
              containers: [{name: manager, image: example.invalid/own:v1}]
`)
	return dir
}
