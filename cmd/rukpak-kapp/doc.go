// Command rukpak-kapp serves rukpak's BundleDeployment API by handing each
// BundleDeployment to kapp-controller as an App (run), and is the CLI that
// goes with it (check, render, convert, catalog, migrate, upgrade,
// version).
//
// The commands, their flags and their output are package cmd's; what they
// do (the cluster checks, the plans, catalog publishing and pushing, every
// registry request) is package client's.
package main
