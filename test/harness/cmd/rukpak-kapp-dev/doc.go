// Command rukpak-kapp-dev is `make run`: with KUBECONFIG set it runs the
// adapter against that cluster; otherwise it starts the local control plane,
// kapp-controller and the adapter, installs the example bundle and keeps
// everything running until interrupted.
//
// It may import api/v1alpha2 and test/harness.
package main
