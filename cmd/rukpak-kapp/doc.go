// Command rukpak-kapp serves rukpak's BundleDeployment API by handing each
// BundleDeployment to kapp-controller as an App (run), and is the CLI
// beside it (check, render, convert, catalog, migrate, version).
//
// It may import the facade (adapter), the pure packages it renders and
// publishes with, adapter/fetch's options, the names its webhook flag
// speaks of (adapter/servers/webhook, adapter/servers/crdsafety), api/,
// convert and ocibundle; nothing imports it.
package main
