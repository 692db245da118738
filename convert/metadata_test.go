package convert

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// operator-registry reads every file under metadata/, whatever its name: a
// misnamed dependencies file still declares dependencies.
func TestMetadataDependenciesInAnyFileName(t *testing.T) {
	t.Parallel()
	b := csvBundle(map[string]bool{"AllNamespaces": true}, "")
	b["metadata/dependency.yaml"] = []byte("dependencies:\n- type: olm.package\n  value:\n    packageName: etcd\n    version: '>=0.9.0'\n")
	r, err := Convert(b, Options{InstallNamespace: "op-ns"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"olm.package etcd >=0.9.0 from metadata/dependency.yaml"}
	if diff := cmp.Diff(want, describe(r.Metadata.Dependencies)); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
}

// The first file in name order that holds each list wins, as in
// operator-registry; annotations may live in any file too, and files that
// are not YAML are skipped with a note.
func TestMetadataFirstFileWins(t *testing.T) {
	t.Parallel()
	b := csvBundle(map[string]bool{"AllNamespaces": true}, "")
	delete(b, "metadata/annotations.yaml")
	b["metadata/a-broken.yaml"] = []byte("{not yaml: [")
	b["metadata/b-props.yaml"] = []byte("properties:\n- type: olm.label\n  value: {label: fast}\n- type: olm.package\n  value: {packageName: demo, version: 1.0.0}\n- type: olm.gvk.required\n  value: {group: example.org, version: v1, kind: Thing}\n")
	b["metadata/c-annotations.yaml"] = []byte(annotations)
	b["metadata/d-deps.yaml"] = []byte("dependencies:\n- type: olm.label\n  value: {label: fast}\n")
	b["metadata/e-deps.yaml"] = []byte("dependencies:\n- type: olm.label\n  value: {label: ignored}\n")
	b["metadata/sub/"] = nil
	b["metadata/sub/deps.yaml"] = []byte("dependencies:\n- type: olm.label\n  value: {label: nested-ignored}\n")
	r, err := Convert(b, Options{InstallNamespace: "op-ns"})
	if err != nil {
		t.Fatal(err)
	}
	m := r.Metadata
	if m.Package.Name != "demo" || m.PackageProperty == nil || *m.PackageProperty != (Package{Name: "demo", Version: "1.0.0"}) {
		t.Errorf("package %+v, property %+v", m.Package, m.PackageProperty)
	}
	if diff := cmp.Diff([]string{"fast"}, m.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	want := []string{
		"olm.gvk Thing (example.org/v1) from metadata/b-props.yaml (olm.gvk.required)",
		"olm.label fast from metadata/d-deps.yaml",
	}
	if diff := cmp.Diff(want, describe(m.Dependencies)); diff != "" {
		t.Errorf("dependencies (-want +got):\n%s", diff)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "metadata/a-broken.yaml") {
		t.Errorf("notes = %q, want one naming the broken file", r.Notes)
	}
}

func TestMetadataNeedsAnnotations(t *testing.T) {
	t.Parallel()
	b := csvBundle(map[string]bool{"AllNamespaces": true}, "")
	b["metadata/annotations.yaml"] = []byte("annotations:\n  unrelated: x\n")
	if _, err := Convert(b, Options{InstallNamespace: "op-ns"}); err == nil || !strings.Contains(err.Error(), "no file in metadata/ holds the bundle annotations") {
		t.Errorf("error = %v", err)
	}
}

func describe(deps []Dependency) []string {
	var out []string
	for _, d := range deps {
		s := d.String() + " from " + d.Source
		if d.Invalid != "" {
			s += " invalid: " + d.Invalid
		}
		out = append(out, s)
	}
	return out
}
