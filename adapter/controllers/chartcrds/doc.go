// Package chartcrds keeps a helm chart's crds/ as Helm keeps them: created
// when absent, owned by no release, never updated or deleted with one. The
// App of a chart tells kapp that they exist (bundlefiles.ChartCRDsDir,
// translate.ChartCRDsFile), so kapp
// waits for them and never touches them; this controller creates the ones
// that are absent, as the account the App deploys with, from the App's
// content Secrets. A chart CRD an earlier version let kapp own (labelled
// by kapp and by the BundleDeployment) is let go the same way: its kapp
// and owner labels are removed, so no App deletes it and no BundleDeployment
// of the same chart finds it owned by another App.
//
// It runs alongside the reconciler, wired in adapter.NewManager, and owns no memory
// between reconciles.
package chartcrds
