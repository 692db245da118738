package packagingapi

import (
	"context"
	"fmt"
	"slices"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
)

// DefaultGlobalNamespace is the global packaging namespace of
// kapp-controller's release (its flag -packaging-global-namespace): the
// Packages there are seen from every namespace.
const DefaultGlobalNamespace = "kapp-controller-packaging-global"

// AnnotationExcludeGlobal, on a Namespace, keeps the global packaging
// namespace's Packages out of what kapp-controller shows in it.
const AnnotationExcludeGlobal = "kapp-controller.carvel.dev/exclude-global-packages"

// The indexes of the catalog Packages' cache (IndexCatalogPackages), so
// that a read of one channel or one OLM package never lists a namespace.
const (
	// IndexRefName is the refName a catalog Package's annotations carry.
	IndexRefName = "catalog.refName"
	// IndexPackage is its OLM package (its label).
	IndexPackage = "catalog.package"
)

// MetadataOf is an empty metadata object of the packaging API's kind, to
// read into: what the catalog controllers' cache keeps of Packages and
// PackageMetadatas.
func MetadataOf(kind string) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(datav1alpha1.SchemeGroupVersion.WithKind(kind))
	return m
}

// MetadataListOf is an empty list of the metadata of kind.
func MetadataListOf(kind string) *metav1.PartialObjectMetadataList {
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(datav1alpha1.SchemeGroupVersion.WithKind(kind + "List"))
	return l
}

// CatalogPackage is the metadata of a Package, as the catalog controllers'
// cache holds it: a catalog Package's labels and annotations say all that
// installs, their channels and dependencies read of it.
func CatalogPackage() *metav1.PartialObjectMetadata { return MetadataOf("Package") }

// CatalogPackageList is a list of CatalogPackage.
func CatalogPackageList() *metav1.PartialObjectMetadataList { return MetadataListOf("Package") }

// NamespaceMetadata is the metadata of a Namespace, which the catalog
// Packages' cache holds too: its AnnotationExcludeGlobal.
func NamespaceMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
	return m
}

// CatalogPackagesSelector selects the Packages of catalogs, published by an
// OperatorCatalog or by a repository `catalog push` made: those that name
// their OLM package.
func CatalogPackagesSelector() labels.Selector {
	r, err := labels.NewRequirement(catalog.LabelPackage, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant key
	}
	return labels.NewSelector().Add(*r)
}

// Indexes are the indexes of the cache of CatalogPackage that a Packages
// reads, by name (IndexRefName, IndexPackage).
func Indexes() map[string]client.IndexerFunc {
	by := func(of func(catalog.Entry) string) client.IndexerFunc {
		return func(o client.Object) []string {
			if e, ok := catalog.EntryOf(o.GetLabels(), o.GetAnnotations()); ok && of(e) != "" {
				return []string{of(e)}
			}
			return nil
		}
	}
	return map[string]client.IndexerFunc{
		IndexRefName: by(func(e catalog.Entry) string { return e.RefName }),
		IndexPackage: by(func(e catalog.Entry) string { return e.Package }),
	}
}

// IndexCatalogPackages adds Indexes to the cache of CatalogPackage that
// a Packages reads.
func IndexCatalogPackages(ctx context.Context, i client.FieldIndexer) error {
	for name, fn := range Indexes() {
		if err := i.IndexField(ctx, CatalogPackage(), name, fn); err != nil {
			return fmt.Errorf("index the catalog Packages by %s: %w", name, err)
		}
	}
	return nil
}

// Packages reads catalog Packages as kapp-controller's packaging API shows
// them to a namespace: the namespace's own and those of the global
// packaging namespace (unless the namespace carries
// AnnotationExcludeGlobal), a Package of the namespace shadowing a global
// one of the same name. It is the one reader of catalog Packages: the
// OperatorInstall controller's channels and dependencies, the retraction
// of what no install runs, and `rukpak-kapp upgrade plan`. In the adapter
// it reads the cache of CatalogPackage (indexed by IndexCatalogPackages,
// with NamespaceMetadata), and the API server only for the whole Package
// of a channel's entry whose metadata names no image (a Package a push
// made before images were annotated); a command with no cache reads
// kapp-controller's API itself (NewDirectPackages), which applies the same
// rules.
type Packages struct {
	cache  client.Reader
	direct client.Reader
	global string
	// served says cache is kapp-controller's API itself, not an indexed
	// cache: it lists by field and applies the global namespace's rule.
	served bool
}

// NewPackages reads through cache and direct; global is kapp-controller's
// -packaging-global-namespace ("": none).
func NewPackages(cache, direct client.Reader, global string) *Packages {
	return &Packages{cache: cache, direct: direct, global: global}
}

// NewDirectPackages reads kapp-controller's packaging API through reader,
// which shows each namespace what it sees.
func NewDirectPackages(reader client.Reader) *Packages {
	return &Packages{cache: reader, direct: reader, served: true}
}

// Global is the global packaging namespace ("": none).
func (p *Packages) Global() string { return p.global }

// Sees says a read of the catalog Packages in ns may see o, a Package:
// o is in ns or in the global packaging namespace. (Whether ns excludes
// the global ones is judged by the read: a wake costs one look.)
func (p *Packages) Sees(ns string, o client.Object) bool {
	return o.GetNamespace() == ns || p.global != "" && o.GetNamespace() == p.global
}

// InGlobal says o, a Package, is in the global packaging namespace: every
// namespace may see it.
func (p *Packages) InGlobal(o client.Object) bool {
	return p.global != "" && o.GetNamespace() == p.global
}

// namespaces are where a read in ns looks: the global namespace first,
// ns last (its Packages shadow those before).
func (p *Packages) namespaces(ctx context.Context, ns string) ([]string, error) {
	if p.served || p.global == "" || ns == p.global || ns == "" {
		return []string{ns}, nil
	}
	m := NamespaceMetadata()
	err := p.cache.Get(ctx, client.ObjectKey{Name: ns}, m)
	switch {
	case apierrors.IsNotFound(err):
		// kapp-controller shows a namespace it cannot read no global Package.
		return []string{ns}, nil
	case err != nil:
		return nil, fmt.Errorf("read namespace %s to know whether it sees the global packaging namespace %s: %w", ns, p.global, err)
	}
	if _, excluded := m.Annotations[AnnotationExcludeGlobal]; excluded {
		return []string{ns}, nil
	}
	return []string{p.global, ns}, nil
}

// List lists the catalog Packages' metadata ns sees whose index (IndexRefName,
// IndexPackage) is value; index "" lists every catalog Package ns sees.
func (p *Packages) List(ctx context.Context, ns, index, value string) ([]metav1.PartialObjectMetadata, error) {
	namespaces, err := p.namespaces(ctx, ns)
	if err != nil {
		return nil, err
	}
	var out []metav1.PartialObjectMetadata
	at := map[string]int{}
	for _, n := range namespaces {
		opts := []client.ListOption{client.InNamespace(n)}
		if p.served {
			opts = append(opts, client.HasLabels{catalog.LabelPackage})
		}
		switch {
		case index == "":
		case p.served && index == IndexRefName:
			opts = append(opts, client.MatchingFields{"spec.refName": value})
		case p.served:
			opts = append(opts, client.MatchingLabels{catalog.LabelPackage: value})
		default:
			opts = append(opts, client.MatchingFields{index: value})
		}
		list := CatalogPackageList()
		if err := p.cache.List(ctx, list, opts...); err != nil {
			return nil, Error(fmt.Sprintf("list the catalog Packages in namespace %s", n), err)
		}
		for _, m := range list.Items {
			if i, ok := at[m.Name]; ok {
				out[i] = m
				continue
			}
			at[m.Name] = len(out)
			out = append(out, m)
		}
	}
	return out, nil
}

// Graph is a channel as a namespace sees it: the graph of its published
// Packages, and the Packages its catalog retracted and keeps only for the
// installs that run them.
type Graph struct {
	// Nodes are the published Packages; one whose image or images lock
	// cannot be read is a node without them, and Unreadable says which and
	// why (a move that needs its image is refused naming it, one that only
	// passes it by is not).
	Nodes      []catalog.Node
	Unreadable error
	// Retracted are the retracted ones, by bundle: the revision that
	// dropped each.
	Retracted map[string]string
}

// Channel is the graph of the channel refName that ns sees. err is a read
// that failed.
func (p *Packages) Channel(ctx context.Context, ns, refName string) (Graph, error) {
	list, err := p.List(ctx, ns, IndexRefName, refName)
	if err != nil {
		return Graph{}, fmt.Errorf("read the channel %s in namespace %s: %w", refName, ns, err)
	}
	g := Graph{Retracted: map[string]string{}}
	var packages []datav1alpha1.Package
	for _, m := range list {
		if rev, retracted := catalog.RetractedIn(m.Annotations); retracted {
			if e, ok := catalog.EntryOf(m.Labels, m.Annotations); ok {
				g.Retracted[e.Bundle] = rev
			}
			continue
		}
		pkg := datav1alpha1.Package{ObjectMeta: m.ObjectMeta}
		if _, err := catalog.ImageOf(m.Annotations, nil); err != nil {
			// Only the whole Package says its image.
			if err := p.direct.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Name}, &pkg); err != nil {
				return Graph{}, Error(fmt.Sprintf("read Package %s/%s", m.Namespace, m.Name), err)
			}
		}
		packages = append(packages, pkg)
	}
	g.Nodes, g.Unreadable = catalog.NodesOf(packages)
	return g, nil
}

// Offers are the offers of the catalog Packages ns sees of the OLM
// packages pkgs (nil: of every package).
func (p *Packages) Offers(ctx context.Context, ns string, pkgs []string) ([]catalog.Offer, error) {
	var list []metav1.PartialObjectMetadata
	if pkgs == nil {
		all, err := p.List(ctx, ns, "", "")
		if err != nil {
			return nil, err
		}
		list = all
	}
	for _, pkg := range slices.Compact(slices.Sorted(slices.Values(pkgs))) {
		some, err := p.List(ctx, ns, IndexPackage, pkg)
		if err != nil {
			return nil, err
		}
		list = append(list, some...)
	}
	out := make([]catalog.Offer, 0, len(list))
	for _, m := range list {
		if o, ok := catalog.OfferOf(m.Labels, m.Annotations); ok {
			out = append(out, o)
		}
	}
	return out, nil
}
