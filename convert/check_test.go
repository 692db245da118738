package convert

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestAPIsNeeded(t *testing.T) {
	t.Parallel()
	gvk := func(g, v, k string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: g, Version: v, Kind: k}
	}
	deps := []Dependency{
		{Type: DependencyGVK, GVK: gvk("b.example.com", "v1", "B")},
		{Type: DependencyPackage, Package: "p", VersionRange: ">=1.0.0"},
		{Type: DependencyConstraint, Value: []byte(`{"any":{"constraints":[{"gvk":{"group":"a.example.com","version":"v1","kind":"A"}},` +
			`{"not":{"constraints":[{"gvk":{"group":"c.example.com","version":"v2","kind":"C"}}]}}]}}`)},
		{Type: DependencyGVK, GVK: gvk("b.example.com", "v1", "B")},
	}
	got := APIsNeeded(deps)
	want := []schema.GroupVersionKind{gvk("a.example.com", "v1", "A"), gvk("b.example.com", "v1", "B"), gvk("c.example.com", "v2", "C")}
	if len(got) != len(want) {
		t.Fatalf("APIsNeeded = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("APIsNeeded[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}
