package operatorcatalog

import (
	"context"
	"errors"
	"fmt"

	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Installs says which catalog entries run: a Package its catalog no
// longer holds is kept while an install runs it, and only then.
type Installs struct {
	// installs reads OperatorInstalls (the catalog controllers' cache),
	// bundles BundleDeployments (the manager's).
	installs, bundles client.Reader
	global            string
}

// NewInstalls reads OperatorInstalls through installs and
// BundleDeployments through bundles; global is kapp-controller's global
// packaging namespace ("": none), whose Packages every namespace's
// installs may run.
func NewInstalls(installs, bundles client.Reader, global string) Installs {
	return Installs{installs: installs, bundles: bundles, global: global}
}

// Runs says an install runs e, whose Package is in namespace ns: its
// status says e is installed, or its BundleDeployment names e (the step
// it installs: once written, a step is finished, so what it installs is
// kept). A BundleDeployment a catalog Package's template made and no
// OperatorInstall adopted yet counts by what it names.
func (i Installs) Runs(ctx context.Context, ns string, e catalog.Entry) (bool, error) {
	var opts []client.ListOption
	if i.global == "" || ns != i.global {
		opts = append(opts, client.InNamespace(ns))
	}
	var list catalogsv1alpha1.OperatorInstallList
	if err := i.installs.List(ctx, &list, append(opts, client.MatchingLabels{catalog.LabelPackage: e.Package})...); err != nil {
		return false, fmt.Errorf("list the OperatorInstalls of catalog package %s: %w", e.Package, err)
	}
	names := map[string]bool{}
	for _, oi := range list.Items {
		if oi.Spec.RefName != e.RefName {
			continue
		}
		if in := oi.Status.Installed; in != nil && in.Bundle == e.Bundle {
			return true, nil
		}
		names[oi.Namespace+"/"+oi.Name] = true
	}
	var bds rukpakv1alpha2.BundleDeploymentList
	if err := i.bundles.List(ctx, &bds, client.MatchingLabels{catalog.LabelPackage: e.Package}); err != nil {
		return false, fmt.Errorf("list the BundleDeployments of catalog package %s: %w", e.Package, err)
	}
	for _, bd := range bds.Items {
		if bd.Annotations[catalog.AnnotationBundle] != e.Bundle {
			continue
		}
		if names[bd.Annotations[catalog.AnnotationOperatorInstall]] {
			return true, nil
		}
		if at := bd.Annotations[catalog.AnnotationPackagesNS]; bd.Annotations[catalog.AnnotationRefName] == e.RefName && (at == ns || i.global != "" && ns == i.global) {
			return true, nil
		}
	}
	return false, nil
}

// retract withdraws what cat published from an earlier revision (a digest
// its tag pointed at before) that the revision published now (p, whole) no
// longer holds: a Package no install runs is deleted, so that neither
// kapp-controller nor the adapter picks it (one an install only asks for
// included: kapp-controller then picks again among what is published);
// one an install runs is kept, marked catalog.AnnotationRetracted with the
// revision, until none does (an install that moves off it wakes the
// catalog); a
// PackageMetadata goes with the last Package of its channel. The OLM
// packages the revision could not publish whole (a refusal) keep what they
// had: what is missing may be a bundle refused, not one dropped. It reads
// the catalogs' cache: it runs after the publication, at every look.
func (r *OperatorCatalogReconciler) retract(ctx context.Context, cat *catalogsv1alpha1.OperatorCatalog, pinned string, p *publication) error {
	r.mu.Lock()
	current := map[objKey]bool{}
	for k := range p.objects {
		current[k] = true
	}
	partial := map[string]bool{}
	for _, ref := range p.refused {
		partial[ref.Package] = true
	}
	for k := range p.failed {
		partial[p.objects[k].pkg] = true
	}
	r.mu.Unlock()
	stale := func(kind string) ([]client.Object, error) {
		list := metadataListOf(kind)
		if err := r.cached.List(ctx, list, client.InNamespace(cat.Namespace), client.MatchingLabels{LabelCatalog: cat.Name}); err != nil {
			return nil, packagingapi.Error(fmt.Sprintf("list the %ss OperatorCatalog %s/%s published", kind, cat.Namespace, cat.Name), err)
		}
		var out []client.Object
		for i := range list.Items {
			o := &list.Items[i]
			if !current[objKey{kind, o.Name}] && !partial[o.Labels[catalog.LabelPackage]] {
				o.SetGroupVersionKind(metadataOf(kind).GroupVersionKind())
				out = append(out, o)
			}
		}
		return out, nil
	}
	pkgs, err := stale(kindPackage)
	if err != nil {
		return err
	}
	kept := map[string]bool{}
	var errs []error
	for _, o := range pkgs {
		e, ok := catalog.EntryOf(o.GetLabels(), o.GetAnnotations())
		used := false
		if ok {
			if used, err = r.installs.Runs(ctx, cat.Namespace, e); err != nil {
				errs = append(errs, err)
				kept[e.RefName] = true
				continue
			}
		}
		if used {
			kept[e.RefName] = true
			if _, marked := catalog.RetractedIn(o.GetAnnotations()); !marked {
				errs = append(errs, r.mark(ctx, o, pinned))
			}
			continue
		}
		errs = append(errs, r.withdraw(ctx, o))
	}
	metas, err := stale(kindMetadata)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, o := range metas {
		if !kept[o.GetName()] {
			errs = append(errs, r.withdraw(ctx, o))
		}
	}
	return errors.Join(errs...)
}

// mark says on o, a Package an install runs, the revision that dropped it:
// the whole Package is read and written back (the adapter updates
// Packages, and patches none), locked by its resourceVersion.
func (r *OperatorCatalogReconciler) mark(ctx context.Context, o client.Object, revision string) error {
	pkg := &datav1alpha1.Package{}
	if err := r.direct.Get(ctx, client.ObjectKeyFromObject(o), pkg); err != nil {
		return client.IgnoreNotFound(packagingapi.Error("read Package "+o.GetName()+" to mark it retracted", err))
	}
	if pkg.Annotations == nil {
		pkg.Annotations = map[string]string{}
	}
	pkg.Annotations[catalog.AnnotationRetracted] = revision
	if err := r.client.Update(ctx, pkg, client.FieldOwner(fieldowner.Name)); client.IgnoreNotFound(err) != nil {
		return packagingapi.Error("mark Package "+o.GetName()+" retracted", err)
	}
	log.FromContext(ctx).Info("kept a Package the catalog retracted, for the installs that run it", "package", o.GetName(), "revision", revision)
	return nil
}

// withdraw deletes o, published from an earlier revision.
func (r *OperatorCatalogReconciler) withdraw(ctx context.Context, o client.Object) error {
	kind := o.GetObjectKind().GroupVersionKind().Kind
	if err := r.client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
		return packagingapi.Error("delete "+kind+" "+o.GetName()+" the catalog retracted", err)
	}
	log.FromContext(ctx).Info("withdrew what the catalog retracted", "kind", kind, "name", o.GetName())
	return nil
}

// onInstall queues the catalogs that keep a retracted Package of the OLM
// package an install or its BundleDeployment (o) installs: it may have
// moved off it.
func (r *OperatorCatalogReconciler) onInstall(ctx context.Context, o client.Object) []reconcile.Request {
	pkg := o.GetLabels()[catalog.LabelPackage]
	if pkg == "" {
		return nil
	}
	list := packagingapi.CatalogPackageList()
	if err := r.cached.List(ctx, list, client.MatchingLabels{catalog.LabelPackage: pkg}); err != nil {
		log.FromContext(ctx).Error(err, "list the Packages of a catalog package to withdraw what its installs left")
		return nil
	}
	seen := map[types.NamespacedName]bool{}
	var out []reconcile.Request
	for _, m := range list.Items {
		id := types.NamespacedName{Namespace: m.Namespace, Name: m.Labels[LabelCatalog]}
		if _, marked := catalog.RetractedIn(m.Annotations); marked && id.Name != "" && !seen[id] {
			seen[id] = true
			out = append(out, reconcile.Request{NamespacedName: id})
		}
	}
	return out
}
