package operatorcatalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
)

// AnnotationHash is the hash of what the catalog wrote of an object (its
// labels, annotations and spec): a publication compares it with the
// object's metadata, so an unchanged object costs no request.
const AnnotationHash = "catalog.rukpak-kapp.dev/published-hash"

// Kinds of what a catalog publishes.
const (
	kindPackage  = "Package"
	kindMetadata = "PackageMetadata"
)

// objKey names a published object in the catalog's namespace.
type objKey struct{ kind, name string }

func (k objKey) String() string { return k.kind + " " + k.name }

func keyOf(o client.Object) objKey {
	if _, ok := o.(*datav1alpha1.Package); ok {
		return objKey{kindPackage, o.GetName()}
	}
	return objKey{kindMetadata, o.GetName()}
}

// entry is one object of a publication.
type entry struct {
	// pkg is the OLM package it comes from.
	pkg string
	// rv is its resourceVersion as the catalog wrote or found it ("":
	// not yet).
	rv string
	// conflict names the other OperatorCatalog that publishes it.
	conflict string
}

// publication is what an OperatorCatalog publishes from one digest: kept
// between reconciles, with the catalog read (on disk), so that an object
// deleted or edited by hand is written again without a pull.
type publication struct {
	// input is the catalog's UID, generation and digest.
	input   string
	catalog string
	source  Catalog
	objects map[objKey]*entry
	refused []catalog.Refusal
	// dirty are the objects a watch saw change, during a publication too,
	// and those the packaging API refused: checked against the cluster at
	// the end of the publication or at the next reconcile.
	dirty map[objKey]bool
	// gone are the objects the watch saw deleted since the catalog last
	// wrote or found them: not counted until they are written again.
	gone map[objKey]bool
	// failed are the objects the packaging API refused at their last
	// write, with its answer: refused in the status, the rest written.
	// Each is tried again with a backoff of its own: refusals counts its
	// refusals in a row, retryAt is when it is written again
	// (refusedLookAgain).
	failed   map[objKey]string
	refusals map[objKey]int
	retryAt  map[objKey]time.Time
	// complete: every package was written once.
	complete bool
}

func (p *publication) close() {
	if p != nil && p.source != nil {
		_ = p.source.Close()
		p.source = nil
	}
}

// counts are the Packages and PackageMetadatas it publishes that are in
// place (written or found as it writes them, and not deleted since as far
// as the watch saw), and the objects another catalog keeps, sorted.
func (p *publication) counts() (pkgs, metas int, conflicts []objKey) {
	for k, e := range p.objects {
		switch {
		case e.conflict != "":
			conflicts = append(conflicts, k)
		case e.rv == "" || p.gone[k] || p.failed[k] != "":
		case k.kind == kindPackage:
			pkgs++
		default:
			metas++
		}
	}
	slices.SortFunc(conflicts, func(a, b objKey) int { return strings.Compare(a.String(), b.String()) })
	return pkgs, metas, conflicts
}

// prepare labels and hashes o as cat publishes it.
func prepare(o client.Object, cat string) (string, error) {
	labels := o.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelCatalog] = cat
	o.SetLabels(labels)
	annotations := o.GetAnnotations()
	delete(annotations, AnnotationHash)
	var spec any
	switch t := o.(type) {
	case *datav1alpha1.Package:
		spec = t.Spec
	case *datav1alpha1.PackageMetadata:
		spec = t.Spec
	}
	data, err := json.Marshal([]any{labels, annotations, spec})
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", o.GetName(), err)
	}
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:16])
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationHash] = hash
	o.SetAnnotations(annotations)
	return hash, nil
}

// objectsOf are a published package's objects.
func objectsOf(pub catalog.Published) []client.Object {
	out := make([]client.Object, 0, len(pub.Metadata)+len(pub.Packages))
	for _, m := range pub.Metadata {
		out = append(out, m)
	}
	for _, p := range pub.Packages {
		out = append(out, p)
	}
	return out
}

// PublishedKinds are the metadata of the kinds catalogs publish, as the
// controller watches them.
func PublishedKinds() []client.Object {
	return []client.Object{metadataOf(kindPackage), metadataOf(kindMetadata)}
}

// metadataOf is an empty metadata object of k's kind, to read into.
func metadataOf(kind string) *metav1.PartialObjectMetadata { return packagingapi.MetadataOf(kind) }

// metadataListOf is an empty list of the metadata of k's kind.
func metadataListOf(kind string) *metav1.PartialObjectMetadataList {
	return packagingapi.MetadataListOf(kind)
}

// put makes want so in the namespace, from live's metadata (read from
// the catalogs' cache for a publication, directly for a repair): written
// when missing, changed, or edited since the catalog wrote it (e.rv); left
// to another OperatorCatalog that publishes it (e.conflict); an object
// nobody publishes (made by hand) is taken over. One the catalog had
// retracted (a revision that holds it again) is written whole, which
// clears the mark.
func (r *OperatorCatalogReconciler) put(ctx context.Context, live client.Reader, cat string, want client.Object, e *entry) error {
	hash, err := prepare(want, cat)
	if err != nil {
		return err
	}
	written, err := r.packages.Put(ctx, live, want, metadataOf(keyOf(want).kind), func(m client.Object) client.Object {
		if owner := m.GetLabels()[LabelCatalog]; owner != "" && owner != cat {
			r.record(e, "", owner)
			return nil
		}
		r.mu.Lock()
		last := e.rv
		r.mu.Unlock()
		_, retracted := catalog.RetractedIn(m.GetAnnotations())
		if m.GetLabels()[LabelCatalog] == cat && m.GetAnnotations()[AnnotationHash] == hash && !retracted && (last == "" || last == m.GetResourceVersion()) {
			r.record(e, m.GetResourceVersion(), "")
			return nil
		}
		want.SetResourceVersion(m.GetResourceVersion())
		return want
	})
	if err != nil {
		return err
	}
	if written != nil {
		r.record(e, written.GetResourceVersion(), "")
	}
	return nil
}

// record says what the catalog wrote or found of e (under the lock the
// watch takes).
func (r *OperatorCatalogReconciler) record(e *entry, rv, conflict string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.rv, e.conflict = rv, conflict
}

// publishAll publishes every package of p's source, a package at a time:
// only one package's objects are held at once.
func (r *OperatorCatalogReconciler) publishAll(ctx context.Context, cat *catalogsv1alpha1.OperatorCatalog, p *publication) error {
	publisher := catalog.NewPublisher(catalog.Options{Domain: cat.Spec.Domain, Namespace: cat.Namespace})
	r.mu.Lock()
	p.refused = nil
	r.mu.Unlock()
	for _, name := range p.source.Packages() {
		cfg, err := p.source.Package(name)
		if err != nil {
			r.mu.Lock()
			p.refused = append(p.refused, catalog.Refusal{Package: name, Reason: err.Error()})
			r.mu.Unlock()
			continue
		}
		pub := publisher.Publish(cfg)
		r.mu.Lock()
		p.refused = append(p.refused, pub.Refused...)
		r.mu.Unlock()
		for _, o := range objectsOf(pub) {
			k := keyOf(o)
			if err := r.written(p, k, r.put(ctx, r.cached, cat.Name, o, r.entry(p, k, name))); err != nil {
				return err
			}
		}
	}
	return nil
}

// written notes how the write of k went: an object the packaging API
// refused is a refusal of its own, tried again with its own backoff, and
// the rest goes on; an API that is not available, or an answer that may
// pass by itself (a conflict, throttling, a timeout, a server error), ends
// the publication, which is tried again with backoff and says so: neither
// is a refusal of the object.
func (r *OperatorCatalogReconciler) written(p *publication, k objKey, err error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case err == nil:
		delete(p.failed, k)
		delete(p.refusals, k)
		delete(p.retryAt, k)
		delete(p.gone, k)
		return nil
	case packagingapi.Unavailable(err) || packagingapi.Transient(err):
		p.dirty[k] = true
		return err
	default:
		p.failed[k] = err.Error()
		p.refusals[k]++
		p.retryAt[k] = r.now().Add(refusedLookAgain(p.refusals[k]))
		p.dirty[k] = true
		return nil
	}
}

// refusedLookAgain is how long an object the packaging API refused n
// times in a row waits before it is written again: 30 s, twice as long
// each time, at most an hour.
func refusedLookAgain(n int) time.Duration {
	return fetch.Doubling(failedLookAgain, time.Hour, n)
}

// nextRetry is when the first refused object of p is due again; zero when
// none is refused.
func (r *OperatorCatalogReconciler) nextRetry(p *publication) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	var next time.Time
	for k := range p.failed {
		if at := p.retryAt[k]; next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next
}

// entry is p's entry for k, made when new (under the lock the watch
// takes).
func (r *OperatorCatalogReconciler) entry(p *publication, k objKey, pkg string) *entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := p.objects[k]
	if e == nil {
		e = &entry{pkg: pkg}
		p.objects[k] = e
	}
	return e
}

// repair writes again what the watch saw deleted or edited (or released
// by the catalog that kept it), during the publication too, and what the
// packaging API refused, reading each object directly: the package it
// comes from is published again from the catalog read, without a pull.
// What a failure leaves unchecked stays to check.
func (r *OperatorCatalogReconciler) repair(ctx context.Context, cat *catalogsv1alpha1.OperatorCatalog, p *publication) (err error) {
	r.mu.Lock()
	dirty := p.dirty
	p.dirty = map[objKey]bool{}
	byPackage := map[string][]objKey{}
	now := r.now()
	for k := range dirty {
		if p.failed[k] != "" && now.Before(p.retryAt[k]) {
			// Refused, and not due again yet.
			p.dirty[k] = true
			delete(dirty, k)
			continue
		}
		if e := p.objects[k]; e != nil {
			byPackage[e.pkg] = append(byPackage[e.pkg], k)
		}
	}
	r.mu.Unlock()
	done := map[objKey]bool{}
	defer func() {
		if err != nil {
			for k := range dirty {
				if !done[k] {
					r.markDirty(p, k)
				}
			}
		}
	}()
	for _, name := range slices.Sorted(maps.Keys(byPackage)) {
		cfg, err := p.source.Package(name)
		if err != nil {
			return err
		}
		// The refNames of one package are unique on their own; the
		// publication checked them across the catalog.
		pub := catalog.NewPublisher(catalog.Options{Domain: cat.Spec.Domain, Namespace: cat.Namespace}).Publish(cfg)
		objs := map[objKey]client.Object{}
		for _, o := range objectsOf(pub) {
			objs[keyOf(o)] = o
		}
		for _, k := range byPackage[name] {
			done[k] = true
			o, ok := objs[k]
			if !ok {
				continue
			}
			if err := r.written(p, k, r.put(ctx, r.direct, cat.Name, o, r.entry(p, k, name))); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *OperatorCatalogReconciler) markDirty(p *publication, k objKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p.dirty[k] = true
}
