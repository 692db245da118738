package packagingapi

import "sigs.k8s.io/controller-runtime/pkg/client"

// LabelsHold says whether live carries every label of want: labels others
// added do not make it differ, so they are no reason to write it again.
func LabelsHold(live, want client.Object) bool {
	for k, v := range want.GetLabels() {
		if live.GetLabels()[k] != v {
			return false
		}
	}
	return true
}
