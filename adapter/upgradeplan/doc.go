// Package upgradeplan says what an upgrade of a catalog install along its
// channel would do, hop by hop, writing nothing (`rukpak-kapp upgrade
// plan`): Read finds the BundleDeployment a PackageInstall made and its
// channel's Packages as kapp-controller's API shows them to the namespace,
// and Compute renders each hop's bundle as the controller would, comparing
// CRDs (with the CRD upgrade safety check over the live custom resources),
// RBAC rules, images and dependencies.
//
// It remembers nothing.
package upgradeplan
