// Package v1alpha2 holds rukpak's BundleDeployment API (group core.rukpak.io),
// served unchanged by rukpak-kapp so existing objects keep working.
//
// It imports nothing of the module: every other package may import it.
// +kubebuilder:object:generate=true
// +groupName=core.rukpak.io
package v1alpha2
