package drift

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// KappManager is the field manager of kapp's writes: kapp sets no field
// manager or user agent of its own, so the API server names its updates
// after the binary kapp-controller runs, "kapp".
const KappManager = "kapp"

// ChangedByOthers says whether old → new changed what kapp applied, and was
// written by someone other than kapp: a spec change (a new generation) for
// kinds that have one; for kinds without (ConfigMaps, ServiceAccounts, RBAC)
// any write that is not to the status; and, for every kind, an owner
// reference to a BundleDeployment put on the object. That last one is
// metadata, which controllers write all the time without it being drift
// (kube-controller-manager annotates every Deployment), but only rukpak
// writes it: a rukpak still running during a hand-over may upgrade its
// release once more and put its references back, and with them rukpak
// keeps reconciling the BundleDeployment and the garbage collector deletes
// the object with it. Writes are told apart by the entries of
// managedFields that the update added or touched; an update that touched
// none (the same writer again within the same second) is not counted, which
// at worst leaves a repair to the next change or the sync period.
func ChangedByOthers(old, cur *metav1.PartialObjectMetadata) bool {
	if old.ResourceVersion == cur.ResourceVersion {
		return false
	}
	specUnchanged := (old.Generation != 0 || cur.Generation != 0) && old.Generation == cur.Generation
	if specUnchanged && !gainedBundleDeploymentOwner(old, cur) {
		return false
	}
	for _, w := range cur.ManagedFields {
		if w.Manager == KappManager || w.Subresource == "status" || hasEntry(old.ManagedFields, w) {
			continue
		}
		return true
	}
	return false
}

func gainedBundleDeploymentOwner(old, cur *metav1.PartialObjectMetadata) bool {
	had := map[types.UID]bool{}
	for _, r := range old.OwnerReferences {
		had[r.UID] = true
	}
	for _, r := range cur.OwnerReferences {
		if isBundleDeploymentOwner(r) && !had[r.UID] {
			return true
		}
	}
	return false
}

func isBundleDeploymentOwner(r metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(r.APIVersion)
	return err == nil && gv.Group == rukpakv1alpha2.GroupVersion.Group && r.Kind == rukpakv1alpha2.OwnerKind
}

// hasEntry says whether fields holds an entry for the same writer with the
// same time: that writer did not write in this update.
func hasEntry(fields []metav1.ManagedFieldsEntry, e metav1.ManagedFieldsEntry) bool {
	for _, f := range fields {
		if f.Manager == e.Manager && f.Operation == e.Operation && f.Subresource == e.Subresource && sameTime(f.Time, e.Time) {
			return true
		}
	}
	return false
}

func sameTime(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(b)
}

// Strip keeps of an installed object's metadata only what the drift
// decision reads: every installed object carries kapp's copy of itself in
// an annotation, which the watch must not keep in memory.
func Strip(m *metav1.PartialObjectMetadata) *metav1.PartialObjectMetadata {
	out := &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta}
	out.Name, out.Namespace, out.UID = m.Name, m.Namespace, m.UID
	out.ResourceVersion, out.Generation = m.ResourceVersion, m.Generation
	out.DeletionTimestamp = m.DeletionTimestamp
	for _, r := range m.OwnerReferences {
		if isBundleDeploymentOwner(r) {
			out.OwnerReferences = append(out.OwnerReferences, metav1.OwnerReference{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, UID: r.UID})
		}
	}
	if v, ok := m.Labels[ownerNameLabel]; ok {
		out.Labels = map[string]string{ownerNameLabel: v}
	}
	for _, f := range m.ManagedFields {
		out.ManagedFields = append(out.ManagedFields, metav1.ManagedFieldsEntry{
			Manager: f.Manager, Operation: f.Operation, Subresource: f.Subresource, Time: f.Time,
		})
	}
	return out
}
