// Package drift repairs what a BundleDeployment installed when someone
// deletes it or changes it by hand, within seconds instead of at the App's
// sync period: it watches the installed objects (metadata only, selected by
// the owner labels kapp puts on every one), and when one is deleted or
// changed by a writer other than kapp it has kapp-controller re-apply the
// App at once, coalescing bursts and backing off from a writer that keeps
// changing the object back.
package drift

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KappManager is the field manager of kapp's writes: kapp sets no field
// manager or user agent of its own, so the API server names its updates
// after the binary kapp-controller runs, "kapp".
const KappManager = "kapp"

// ChangedByOthers says whether old → new changed what kapp applied, and was
// written by someone other than kapp: a spec change (a new generation) for
// kinds that have one; for kinds without (ConfigMaps, ServiceAccounts, RBAC)
// any write that is not to the status. Writes are told apart by the entries
// of managedFields that the update added or touched; an update that touched
// none (the same writer again within the same second) is not counted, which
// at worst leaves a repair to the next change or the sync period.
func ChangedByOthers(old, cur *metav1.PartialObjectMetadata) bool {
	if old.ResourceVersion == cur.ResourceVersion {
		return false
	}
	if (old.Generation != 0 || cur.Generation != 0) && old.Generation == cur.Generation {
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
