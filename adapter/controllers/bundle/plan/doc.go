// Package plan decides what the adapter does for a Bundle on its own:
// a v1alpha1 Bundle (rukpak v0.16's API) that a user or a program made,
// not one a BundleDeployment's template generated. rukpak v0.16 unpacked
// such a Bundle in a Pod and reported its phase; the adapter fetches it
// itself, checks it as its class requires, keeps its content for
// status.contentURL and reports exactly rukpak v0.16's status (Status).
// Which step a reconcile takes (Plan), which source a fetch reads
// (Source), what a fetch under way or failed reports (Waiting,
// FetchFailed), what a Bundle is fetched and laid out as (View) and which
// Bundles are left to their BundleDeployment (Generated) are decided
// here, without a client or a clock.
//
// It owns no state.
package plan
