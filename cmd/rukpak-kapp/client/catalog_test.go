package client

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
)

// A Package a push keeps from the previous repository is marked retracted
// in the push's revision, its other fields kept; one an earlier push
// marked keeps the revision that dropped it.
func TestMarkRetracted(t *testing.T) {
	pkg := "apiVersion: data.packaging.carvel.dev/v1alpha1\nkind: Package\nmetadata:\n  name: s.p.example.com.1.0.0\n  annotations:\n    a: b\nspec:\n  refName: s.p.example.com\n  version: 1.0.0\n"
	out, err := markRetracted([]byte(pkg), "registry.example/repo:v2")
	if err != nil {
		t.Fatal(err)
	}
	var obj struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec map[string]string `json:"spec"`
	}
	if err := yaml.Unmarshal(out, &obj); err != nil {
		t.Fatal(err)
	}
	if obj.Metadata.Annotations[catalog.AnnotationRetracted] != "registry.example/repo:v2" || obj.Metadata.Annotations["a"] != "b" || obj.Spec["version"] != "1.0.0" {
		t.Errorf("marked: %s", out)
	}
	again, err := markRetracted(out, "registry.example/repo:v3")
	if err != nil || !strings.Contains(string(again), "registry.example/repo:v2") || strings.Contains(string(again), "v3") {
		t.Errorf("marked again: %s, %v: want the first revision kept", again, err)
	}
}
