package drift

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func entry(manager, subresource string, at time.Time) metav1.ManagedFieldsEntry {
	t := metav1.NewTime(at)
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: subresource, Time: &t}
}

func object(rv string, generation int64, fields ...metav1.ManagedFieldsEntry) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.ResourceVersion, m.Generation, m.ManagedFields = rv, generation, fields
	return m
}

func owned(m *metav1.PartialObjectMetadata, refs ...metav1.OwnerReference) *metav1.PartialObjectMetadata {
	m.OwnerReferences = refs
	return m
}

func rukpakRef(uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "core.rukpak.io/v1alpha2", Kind: "BundleDeployment", Name: "bd", UID: uid}
}

func TestChangedByOthers(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Second)
	kapp := entry("kapp", "", t0)
	tests := []struct {
		name     string
		old, cur *metav1.PartialObjectMetadata
		want     bool
	}{
		{"nothing written (a resync)", object("1", 1, kapp), object("1", 1, kapp), false},
		{"replicas edited by hand: new generation, new writer", object("1", 1, kapp), object("2", 2, kapp, entry("kubectl-edit", "", t1)), true},
		{"scaled through the scale subresource", object("1", 1, kapp), object("2", 2, kapp, entry("kubectl", "scale", t1)), true},
		{"kapp applied a new version", object("1", 1, kapp), object("2", 2, entry("kapp", "", t1)), false},
		{"a controller wrote the status", object("1", 1, kapp), object("2", 1, kapp, entry("kube-controller-manager", "status", t1)), false},
		{"a controller annotated a Deployment (no new generation)", object("1", 1, kapp), object("2", 1, kapp, entry("kube-controller-manager", "", t1)), false},
		{"ConfigMap data edited (kinds without a generation)", object("1", 0, kapp), object("2", 0, kapp, entry("someone-by-hand", "", t1)), true},
		{"ConfigMap rewritten by kapp", object("1", 0, kapp), object("2", 0, entry("kapp", "", t1)), false},
		{"the same writer again within the same second: not told apart", object("1", 0, kapp, entry("someone", "", t1)), object("2", 0, kapp, entry("someone", "", t1)), false},
		{"the same writer again a second later", object("1", 0, kapp, entry("someone", "", t0)), object("2", 0, kapp, entry("someone", "", t1)), true},
		{"a fight: the writer's entry comes back after kapp took the field", object("1", 3, entry("kapp", "", t1)), object("2", 4, entry("kapp", "", t1), entry("fighter", "", t1)), true},
		{"a status write on a kind without a generation", object("1", 0, kapp), object("2", 0, kapp, entry("kubelet", "status", t1)), false},
		{"rukpak put its owner reference back (metadata only)", object("1", 1, kapp), owned(object("2", 1, kapp, entry("core", "", t1)), rukpakRef("bd-uid")), true},
		{"kapp put the owner reference on (a hand-back)", object("1", 1, kapp), owned(object("2", 1, entry("kapp", "", t1)), rukpakRef("bd-uid")), false},
		{"the owner reference was there before", owned(object("1", 1, kapp), rukpakRef("bd-uid")), owned(object("2", 1, kapp, entry("core", "", t1)), rukpakRef("bd-uid")), false},
		{"another kind's owner reference (metadata only)", object("1", 1, kapp), owned(object("2", 1, kapp, entry("some-operator", "", t1)),
			metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "BundleDeployment", Name: "x", UID: "other"}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ChangedByOthers(tt.old, tt.cur); got != tt.want {
				t.Errorf("ChangedByOthers = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStrip(t *testing.T) {
	t.Parallel()
	at := metav1.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	in := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: "x", Namespace: "ns", UID: "u", ResourceVersion: "7", Generation: 3,
		OwnerReferences: []metav1.OwnerReference{rukpakRef("bd-uid"), {APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "cm"}},
		Labels:          map[string]string{ownerNameLabel: "bd", ownerKindLabel: "BundleDeployment", "kapp.k14s.io/app": "123"},
		Annotations:     map[string]string{"kapp.k14s.io/original": "{... the whole object ...}"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kapp", Operation: metav1.ManagedFieldsOperationUpdate, Time: &at,
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{}}`)}}},
	}}
	out := Strip(in)
	if out.Annotations != nil || len(out.Labels) != 1 || out.Labels[ownerNameLabel] != "bd" {
		t.Errorf("kept annotations %v, labels %v", out.Annotations, out.Labels)
	}
	if out.ManagedFields[0].FieldsV1 != nil || out.ManagedFields[0].Manager != "kapp" || !out.ManagedFields[0].Time.Equal(&at) {
		t.Errorf("managed fields = %+v", out.ManagedFields)
	}
	if len(out.OwnerReferences) != 1 || out.OwnerReferences[0].UID != "bd-uid" {
		t.Errorf("owner references = %+v, want only the BundleDeployment's", out.OwnerReferences)
	}
	if out.Name != "x" || out.Namespace != "ns" || out.ResourceVersion != "7" || out.Generation != 3 {
		t.Errorf("identity lost: %+v", out.ObjectMeta)
	}
	// What the decision reads survives the stripping.
	edited := in.DeepCopy()
	edited.ResourceVersion, edited.Generation = "8", 4
	edited.ManagedFields = append(edited.ManagedFields, entry("kubectl-edit", "", at.Add(time.Second)))
	if !ChangedByOthers(Strip(in), Strip(edited)) {
		t.Error("a change by hand is lost in the stripped metadata")
	}
}
