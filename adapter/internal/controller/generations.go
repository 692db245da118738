package controller

import (
	"context"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// A BundleDeployment of rukpak's first API (v1alpha1, told apart by
// rukpakv1alpha1.IsV1alpha1) is installed through one App like a v1alpha2
// one; before that its template's Bundle is found or made, and its status
// is reported in v1alpha1's terms (reportV1alpha1).

// WithBundles has r serve BundleDeployments of rukpak's first API with the
// Bundles their templates generate. Without it they are installed as
// v1alpha2 ones.
func (r *Reconciler) WithBundles(b Bundles) *Reconciler {
	r.bundles = b
	return r
}

// generations says bd is one of rukpak's first API, served as one.
func (r *Reconciler) generations(bd *rukpakv1alpha2.BundleDeployment) bool {
	return r.bundles != nil && rukpakv1alpha1.IsV1alpha1(bd)
}

// viewOf is bd as it is installed: an alias class replaced by its built-in
// class and, for rukpak's first API, rukpak v0.16's install namespace.
func (r *Reconciler) viewOf(bd *rukpakv1alpha2.BundleDeployment) *rukpakv1alpha2.BundleDeployment {
	view := r.set.Classes.asBuiltin(bd)
	if !r.generations(bd) {
		return view
	}
	return bundles.View(view, r.set.Config.SystemNamespace)
}

// generate finds bd's Bundles and the current template's, making it when
// create is set (an install). stop, when set, says nothing is installed
// now: the Bundle could not be made (its Err says why, or the Bundle limit
// does) or its source is an upload.
func (r *Reconciler) generate(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, create bool) (*scope.Generated, *scope.Outcome) {
	g, err := r.bundles.Generate(ctx, rukpakv1alpha1.FromV1alpha2(bd), create)
	switch {
	case err != nil:
		return g, &scope.Outcome{Err: err}
	case g.Bundle == nil:
		// The Bundle limit: the watch on Bundles brings it back when one goes.
		return g, &scope.Outcome{}
	case create && g.BD.Spec.Template.Spec.Source.Type == rukpakv1alpha1.SourceTypeUpload:
		return g, &scope.Outcome{Err: errUpload}
	}
	return g, nil
}

// bundlesReported is bd as the status computation reads what is installed:
// its active Bundle's resolved source (bundles.Reported).
func bundlesReported(bd *rukpakv1alpha2.BundleDeployment, g *scope.Generated) *rukpakv1alpha2.BundleDeployment {
	if g == nil {
		return bd
	}
	return bundles.Reported(bd, g.Listed)
}

// errUpload refuses rukpak v0.16's upload source: its content lived in
// rukpak's own upload service, which rukpak-kapp does not run.
var errUpload = &translate.UnsupportedError{Reason: `source type "upload" is not served by rukpak-kapp: rukpakctl run uploaded bundles to ` +
	"rukpak v0.16's own upload service, which rukpak-kapp does not run. Serve the bundle from an image, a git repository, " +
	"an http URL or configMaps (kubectl create configmap --from-file in the system namespace) and set spec.template.spec.source to it"}
