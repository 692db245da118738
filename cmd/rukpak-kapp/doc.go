// Command rukpak-kapp serves rukpak's BundleDeployment API by handing each
// BundleDeployment to kapp-controller as an App.
//
// It may import the facade (adapter), the pure packages it renders and
// publishes with, adapter/fetch's options, api/, convert and ocibundle;
// nothing imports it.
package main
