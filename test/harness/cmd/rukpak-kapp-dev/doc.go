// Command rukpak-kapp-dev is `make run`: it starts the local control plane,
// kapp-controller and the adapter, installs the example bundles, publishes
// an example OperatorCatalog and keeps everything running until
// interrupted, whatever KUBECONFIG says; only `make run CLUSTER=kubeconfig`
// runs the adapter against the cluster KUBECONFIG names.
//
// It may import api/v1alpha2 and test/harness.
package main
