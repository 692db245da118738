package store

import (
	"context"
	"fmt"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/content"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// Materialized is a bundle fetched and laid out for the App: the one path
// from a source to what an App reads, taken by the App mode's content,
// the offline render, the export as a Carvel package and the take-over's
// look at the bundle as it is now.
type Materialized struct {
	// Files are the source's files as fetched.
	Files fetch.Files
	// Resolved is the source pinned to what was fetched (image digest, git
	// commit).
	Resolved *rukpakv1alpha2.BundleSource
	// Layout is the bundle laid out for the App (bundlefiles.Lay).
	Layout *bundlefiles.Layout
	// Fetched says the fetch succeeded: an error with Fetched set is the
	// content's (it is no valid bundle), one without is the fetch's.
	Fetched bool
}

// Materialize fetches bd's source through f, within FetchTimeout, and lays
// the bundle out with the webhook certificates of certs. A bundle that
// fetched but cannot be laid out comes back with its error, Fetched and
// Resolved set, naming the source the refused content came from.
func Materialize(ctx context.Context, f Fetcher, bd *rukpakv1alpha2.BundleDeployment, certs convert.CertSource) (Materialized, error) {
	// A relocated copy that is not the image the catalog pushed is the
	// source's fault, refused before anything is pulled from it and not
	// retried: only a new spec ends it.
	if _, err := bundlefiles.Relocations(bd); err != nil {
		return Materialized{}, fmt.Errorf("%w: %v", fetch.ErrInvalidContent, err)
	}
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	files, resolved, err := f.Fetch(ctx, bd)
	if err != nil {
		return Materialized{}, err
	}
	m := Materialized{Files: files, Resolved: resolved, Fetched: true}
	if m.Layout, err = bundlefiles.Lay(bd, files, certs); err != nil {
		return m, err
	}
	return m, nil
}

// Pack is the layout in the chunks of bd's content Secrets.
func (m Materialized) Pack(bd *rukpakv1alpha2.BundleDeployment) ([]content.Chunk, error) {
	return content.Pack(bd.Name, m.Layout.Files)
}

// Recorded is what the App records of a registry+v1 bundle's layout; nil
// for other formats.
func Recorded(layout *bundlefiles.Layout) *translate.BundleMetadata {
	m := layout.Metadata
	if m == nil {
		return nil
	}
	return &translate.BundleMetadata{Package: m.Package, Labels: m.Labels, Dependencies: m.Dependencies, Notes: layout.Notes}
}
