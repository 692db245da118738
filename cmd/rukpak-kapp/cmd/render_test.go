package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/v1alpha1/deployments/templates"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
)

// rukpak v0.16.0's own example (docs/provisioners/plain.md).
const v1alpha1Example = `apiVersion: core.rukpak.io/v1alpha1
kind: BundleDeployment
metadata:
  name: my-bundle-deployment
spec:
  provisionerClassName: core-rukpak-io-plain
  template:
    metadata:
      labels:
        app: my-bundle
    spec:
      source:
        type: image
        image:
          ref: my-bundle@sha256:xyz123
      provisionerClassName: core-rukpak-io-plain
`

func TestRender_V1alpha1(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "bd.yaml")
	if err := os.WriteFile(file, []byte(v1alpha1Example), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := Execute([]string{"render", "-f", file}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	docs := strings.Split(strings.TrimPrefix(out.String(), "---\n"), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("want the Bundle and the App, got:\n%s", out.String())
	}
	var b rukpakv1alpha1.Bundle
	if err := yaml.Unmarshal([]byte(docs[0]), &b); err != nil {
		t.Fatal(err)
	}
	var first rukpakv1alpha1.BundleDeployment
	if err := yaml.Unmarshal([]byte(v1alpha1Example), &first); err != nil {
		t.Fatal(err)
	}
	if b.Kind != "Bundle" || b.Name != templates.Desired(&first).Name || b.Labels["app"] != "my-bundle" {
		t.Errorf("the Bundle: %s", docs[0])
	}
	var app kappctrlv1alpha1.App
	if err := yaml.Unmarshal([]byte(docs[1]), &app); err != nil {
		t.Fatal(err)
	}
	if app.Kind != "App" || app.Spec.DefaultNamespace != "rukpak-system" || app.Spec.Fetch[0].Image == nil || app.Spec.Fetch[0].Image.URL != "my-bundle@sha256:xyz123" {
		t.Errorf("the App, installed where rukpak v0.16 installed it: %s", docs[1])
	}

	upload := strings.Replace(strings.Replace(v1alpha1Example, "type: image", "type: upload\n        upload: {}", 1), "        image:\n          ref: my-bundle@sha256:xyz123\n", "", 1)
	if err := os.WriteFile(file, []byte(upload), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	if code := Execute([]string{"render", "-f", file}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), `"upload" is not served`) {
		t.Errorf("an upload source: exit %d, stderr %q", code, errOut.String())
	}
}
