package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// APIs says whether the cluster serves an API, for olm.gvk dependencies.
type APIs interface {
	Serves(ctx context.Context, gvk schema.GroupVersionKind) (bool, error)
}

// ServedAPIs asks the API server's discovery, uncached: a dependency is
// checked when something it waits for changed, and must see that change.
func ServedAPIs(cfg *rest.Config) (APIs, error) {
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create discovery client: %w", err)
	}
	return discoveryAPIs{d}, nil
}

type discoveryAPIs struct{ d discovery.DiscoveryInterface }

func (a discoveryAPIs) Serves(_ context.Context, gvk schema.GroupVersionKind) (bool, error) {
	list, err := a.d.ServerResourcesForGroupVersion(gvk.GroupVersion().String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discover %s: %w", gvk.GroupVersion(), err)
	}
	for _, r := range list.APIResources {
		if r.Kind == gvk.Kind && !strings.Contains(r.Name, "/") {
			return true, nil
		}
	}
	return false, nil
}

// Dependencies checks registry+v1 bundles' declared dependencies and holds
// the BundleDeployments waiting for them, each with what it waits for, so
// that a change of what it waits for (an API of its group served, a bundle
// of its package installed) wakes it without an edit, and nothing else
// does.
type Dependencies struct {
	client client.Reader
	cfg    translate.Config
	apis   APIs

	mu      sync.Mutex
	waiting map[string]*waitFor
}

// waitFor is what one waiting BundleDeployment waits for.
type waitFor struct {
	// groups are the API groups of the kinds it needs: a CRD or an
	// APIService of one of them may serve one.
	groups map[string]bool
	// packages are the packages it needs installed: an App that deployed a
	// bundle of one of them may be one.
	packages map[string]bool
	// anyPackage: it needs what any installed bundle may offer (an
	// olm.label or olm.constraint dependency).
	anyPackage bool
}

// waitOf is what a bundle with the unmet dependencies unmet waits for.
func waitOf(unmet []convert.Unmet) *waitFor {
	w := &waitFor{groups: map[string]bool{}, packages: map[string]bool{}}
	for _, u := range unmet {
		d := u.Dependency
		switch d.Type {
		case convert.DependencyGVK:
			w.groups[d.GVK.Group] = true
		case convert.DependencyPackage:
			w.packages[d.Package] = true
		default:
			for _, gvk := range convert.APIsNeeded([]convert.Dependency{d}) {
				w.groups[gvk.Group] = true
			}
			w.anyPackage = true
		}
	}
	return w
}

func newDependencies(c client.Client, cfg translate.Config, apis APIs) *Dependencies {
	return &Dependencies{client: c, cfg: cfg, apis: apis, waiting: map[string]*waitFor{}}
}

// check checks a registry+v1 bundle's dependencies before its content is
// installed; what is installed already is not judged again. The failure
// says what the bundle waits for; nil when nothing.
func (d *Dependencies) check(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, f Fetched) (*status.Failure, error) {
	if f.Bundle == nil || len(f.Bundle.Dependencies) == 0 || bd.Annotations[rukpakv1alpha2.AnnotationSkipDependencyCheck] == "true" ||
		status.Current(bd, f.Resolved) {
		d.set(bd.Name, nil)
		return nil, nil
	}
	// What may end the wait is recorded before the reads that decide it,
	// so that an event between a read and the record still wakes it.
	d.set(bd.Name, waitOf(unmetAll(f.Bundle.Dependencies)))
	unmet, err := d.Unmet(ctx, bd.Name, f.Bundle.Dependencies)
	if err != nil {
		return nil, &scope.StepError{Step: scope.StepStore, Err: fmt.Errorf("check dependencies: %w", err)}
	}
	if len(unmet) == 0 {
		d.set(bd.Name, nil)
		return nil, nil
	}
	d.set(bd.Name, waitOf(unmet))
	msgs := make([]string, len(unmet))
	for i, u := range unmet {
		msgs[i] = u.Message
	}
	return &status.Failure{Kind: status.DependenciesUnmet, Message: strings.Join(msgs, "; ")}, nil
}

func unmetAll(deps []convert.Dependency) []convert.Unmet {
	all := make([]convert.Unmet, len(deps))
	for i, dep := range deps {
		all[i] = convert.Unmet{Dependency: dep}
	}
	return all
}

// Unmet checks what a bundle declares it needs against the cluster: the
// APIs it serves and the packages the BundleDeployments but except
// installed (their Apps deployed them).
func (d *Dependencies) Unmet(ctx context.Context, except string, deps []convert.Dependency) ([]convert.Unmet, error) {
	facts := convert.Facts{Served: map[schema.GroupVersionKind]bool{}}
	for _, gvk := range convert.APIsNeeded(deps) {
		ok, err := d.apis.Serves(ctx, gvk)
		if err != nil {
			return nil, err
		}
		facts.Served[gvk] = ok
	}
	installed, err := d.installedPackages(ctx, except)
	if err != nil {
		return nil, err
	}
	facts.Installed = installed
	return convert.CheckDependencies(deps, facts), nil
}

// installedPackages are the registry+v1 bundles the other
// BundleDeployments' Apps deployed: a package is recognised by its bundle's
// package name and ClusterServiceVersion version, which the App records.
func (d *Dependencies) installedPackages(ctx context.Context, except string) ([]convert.InstalledPackage, error) {
	var all []kappctrlv1alpha1.App
	for _, ns := range translate.Namespaces(d.cfg) {
		apps := &kappctrlv1alpha1.AppList{}
		if err := d.client.List(ctx, apps, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("list Apps in namespace %s: %w", ns, err)
		}
		all = append(all, apps.Items...)
	}
	var out []convert.InstalledPackage
	for i := range all {
		app := &all[i]
		data, ok := app.Annotations[rukpakv1alpha2.AnnotationBundleMetadata]
		if !ok || app.Name == except || !kube.DeployedCurrent(app) {
			continue
		}
		m := translate.BundleMetadata{}
		if json.Unmarshal([]byte(data), &m) != nil {
			continue
		}
		out = append(out, convert.InstalledPackage{Package: m.Package, Labels: m.Labels, By: app.Name})
	}
	return out, nil
}

// set notes that name waits for w (nil: for nothing).
func (d *Dependencies) set(name string, w *waitFor) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if w == nil {
		delete(d.waiting, name)
		return
	}
	d.waiting[name] = w
}

// Forget drops name from the waiting set.
func (d *Dependencies) Forget(name string) { d.set(name, nil) }

// Waiting says whether name waits for a dependency.
func (d *Dependencies) Waiting(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.waiting[name] != nil
}

// DependentsOf maps an event to the waiting BundleDeployments it may meet: a CRD
// (plural.group) or an APIService (version.group) to those that need a
// kind of its group, an App that deployed a registry+v1 bundle to those
// that need its package. Any other event wakes none: an App of no bundle,
// or of a bundle no one waits for, costs nothing.
func (d *Dependencies) DependentsOf(_ context.Context, o client.Object) []reconcile.Request {
	d.mu.Lock()
	empty := len(d.waiting) == 0
	d.mu.Unlock()
	if empty || o == nil {
		return nil
	}
	var meets func(*waitFor) bool
	switch o := o.(type) {
	case *kappctrlv1alpha1.App:
		data, ok := o.Annotations[rukpakv1alpha2.AnnotationBundleMetadata]
		m := translate.BundleMetadata{}
		if !ok || json.Unmarshal([]byte(data), &m) != nil {
			return nil
		}
		meets = func(w *waitFor) bool { return w.anyPackage || w.packages[m.Package.Name] }
	default:
		_, group, ok := strings.Cut(o.GetName(), ".")
		if !ok {
			return nil
		}
		meets = func(w *waitFor) bool { return w.groups[group] }
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []reconcile.Request
	for name, w := range d.waiting {
		if meets(w) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: name}})
		}
	}
	return out
}
