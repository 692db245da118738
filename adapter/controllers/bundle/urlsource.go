package bundle

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/contenturl"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/bundle/plan"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// URLSource finds and fetches what contentURLs serve (the contenturl.Source
// of the adapter's HTTPS handler).
type URLSource struct {
	// reader reads the object a request names from the API server: a
	// status just written is what the URL serves.
	reader  client.Reader
	fetcher store.Fetcher
	store   *contenturl.Tarballs
	// classes maps each claimed class to the built-in one it is unpacked as.
	classes         map[string]string
	systemNamespace string
}

// NewURLSource serves content fetched through fetcher, kept in s; classes
// are the adapter's (claimed → built-in).
func NewURLSource(reader client.Reader, fetcher store.Fetcher, s *contenturl.Tarballs, classes map[string]string, systemNamespace string) *URLSource {
	return &URLSource{reader: reader, fetcher: fetcher, store: s, classes: classes, systemNamespace: systemNamespace}
}

// Lookup is what kind/name's contentURL serves now: nothing unless its
// status reports content unpacked at a resolved source, which the content
// is fetched from again when this replica does not hold it.
func (c *URLSource) Lookup(ctx context.Context, kind contenturl.Kind, name string) (contenturl.Served, error) {
	switch kind {
	case contenturl.KindBundle:
		b := &rukpakv1alpha1.Bundle{}
		if err := c.get(ctx, name, b); err != nil {
			return contenturl.Served{}, err
		}
		class, ok := c.classes[b.Spec.ProvisionerClassName]
		if !ok || b.Status.Phase != rukpakv1alpha1.PhaseUnpacked || b.Status.ResolvedSource == nil || b.Status.ContentURL == "" {
			return contenturl.Served{}, contenturl.ErrNoContent
		}
		src := *b.Status.ResolvedSource
		return contenturl.Served{Key: bundleKey(b.UID, class, src), Fill: func(ctx context.Context) (map[string][]byte, error) {
			files, _, err := c.bundleFiles(ctx, b, class, src)
			return files, err
		}}, nil
	case contenturl.KindBundleDeployment:
		bd := &rukpakv1alpha2.BundleDeployment{}
		if err := c.get(ctx, name, bd); err != nil {
			return contenturl.Served{}, err
		}
		class, ok := c.classes[bd.Spec.ProvisionerClassName]
		if !ok || bd.Status.ResolvedSource == nil || bd.Status.ContentURL == "" {
			return contenturl.Served{}, contenturl.ErrNoContent
		}
		view := bd.DeepCopy()
		view.Spec.ProvisionerClassName, view.Spec.Source = class, *bd.Status.ResolvedSource
		key := contenturl.Key{UID: bd.UID, Version: contenturl.VersionOf(class, view.Spec.Source)}
		return contenturl.Served{Key: key, Fill: func(ctx context.Context) (map[string][]byte, error) {
			// A BundleDeployment's content is its source as fetched, as
			// rukpak v0.24 stored it before its handler read it; fetched
			// as every content is, within store.FetchTimeout and checked
			// by its layout.
			m, err := store.Materialize(ctx, c.fetcher, view, noCertificates)
			if err != nil {
				return nil, err
			}
			return m.Files, nil
		}}, nil
	}
	return contenturl.Served{}, contenturl.ErrNoContent
}

func (c *URLSource) get(ctx context.Context, name string, obj client.Object) error {
	err := c.reader.Get(ctx, client.ObjectKey{Name: name}, obj)
	if apierrors.IsNotFound(err) {
		return contenturl.ErrNoContent
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	return nil
}

// bundleFiles fetches b's content as class from src, checks it as rukpak
// v0.16 checked a Bundle it unpacked (plain: manifests/ holds objects;
// registry+v1: it converts, as rukpak v0.16 converted it; helm: a chart),
// and returns what its contentURL serves with the source pinned to what
// was fetched. rukpak v0.16 served a registry+v1 Bundle converted to a
// plain one: so is it here, with the serving certificates of its webhooks,
// which the adapter makes only when it installs, left empty.
func (c *URLSource) bundleFiles(ctx context.Context, b *rukpakv1alpha1.Bundle, class string, src rukpakv1alpha1.BundleSource) (map[string][]byte, *rukpakv1alpha1.BundleSource, error) {
	if src.Type == rukpakv1alpha1.SourceTypeUpload {
		return nil, nil, errUpload
	}
	m, err := store.Materialize(ctx, c.fetcher, plan.View(b, class, src, c.systemNamespace), noCertificates)
	if err != nil {
		return nil, nil, err
	}
	files := m.Files
	switch class {
	case rukpakv1alpha2.ClassPlain:
		if err := bundlefiles.CheckPlainObjects(m.Layout.Files); err != nil {
			return nil, nil, err
		}
	case rukpakv1alpha2.ClassRegistry:
		files = m.Layout.Files
	}
	resolved := rukpakv1alpha1.SourceFromV1alpha2(*m.Resolved)
	return files, &resolved, nil
}

// bundleKey names a Bundle's content: the same for the unpack that stored
// it and for every later look at the status it wrote.
func bundleKey(uid types.UID, class string, resolved rukpakv1alpha1.BundleSource) contenturl.Key {
	return contenturl.Key{UID: uid, Version: contenturl.VersionOf(class, resolved)}
}

func noCertificates(string, string) (convert.ServingCert, error) { return convert.ServingCert{}, nil }

// errUpload refuses a Bundle's upload source (scope.UploadRefused): only a
// new Bundle can change it.
var errUpload = scope.UploadRefused("make a new Bundle of it: a Bundle's spec never changes")
