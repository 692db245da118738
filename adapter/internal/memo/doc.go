// Package memo is the one shape of the adapter's memory between
// reconciles: a value per object name (a BundleDeployment's, a Bundle's),
// safe for the reconciles that run side by side, with the Forget every
// memory of a BundleDeployment has (the BundleDeployment reconciler's finish calls each
// one); and OwnWrites, the version each controller's last status write
// replaced, kept that way.
//
// It owns no memory itself, only the type; every package of its tier may
// import it (the BundleDeployment reconciler, the serve mode and the Bundle controller do).
package memo
