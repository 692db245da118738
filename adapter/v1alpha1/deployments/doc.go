// Package deployments serves BundleDeployments of rukpak's first API
// (v1alpha1) behind the BundleDeployment reconciler's Bundles seam: everything the
// BundleDeployment reconciler does differently for one is here (V1alpha1). Its view is
// rukpak v0.16's install namespace; its read lists the BundleDeployment's
// generated Bundles and names the one its current template asks for; its
// prepare step makes that Bundle (refusing the upload source, which
// rukpak-kapp does not serve) and takes rukpak v0.16's finalizer off
// Bundles rukpak made, which nothing else would remove once rukpak-kapp has
// taken over; its status write maps the v1alpha2 status the BundleDeployment reconciler
// computed to the BundleDeployment's and its Bundle's v1alpha1 statuses and
// deletes the Bundles superseded, as templates (below it) decides. Set
// keeps the Bundles in the cluster.
//
// It remembers nothing. The BundleDeployment reconciler uses it through its Bundles
// interface.
package deployments
