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
	"github.com/rukpak-kapp/rukpak-kapp/adapter/pure/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/pure/translate"
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
// the BundleDeployments waiting for them, so that a change of what they
// wait for (an API served, a bundle installed) wakes them without an edit.
type Dependencies struct {
	client client.Reader
	cfg    translate.Config
	apis   APIs
	// catalog installs a catalog bundle's dependencies from its catalog.
	catalog catalogDeps

	mu      sync.Mutex
	waiting map[string]bool
}

func newDependencies(c client.Client, direct client.Reader, cfg translate.Config, apis APIs) *Dependencies {
	return &Dependencies{client: c, cfg: cfg, apis: apis, catalog: catalogDeps{direct: direct, writer: c}, waiting: map[string]bool{}}
}

// check checks a registry+v1 bundle's dependencies before its content is
// installed; what is installed already is not judged again. The failure
// says what the bundle waits for; nil when nothing. A catalog bundle's
// unmet dependencies are met from its catalog (catalogDeps).
func (d *Dependencies) check(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, f Fetched) (*status.Failure, error) {
	if f.Bundle == nil || len(f.Bundle.Dependencies) == 0 || bd.Annotations[rukpakv1alpha2.AnnotationSkipDependencyCheck] == "true" ||
		status.Current(bd, f.Resolved) {
		d.set(bd.Name, false)
		return nil, nil
	}
	unmet, err := d.unmet(ctx, bd, f.Bundle)
	if err == nil && len(unmet) > 0 && fromCatalog(bd) {
		var wait *status.Failure
		wait, err = d.catalog.meet(ctx, bd, unmet)
		if err == nil {
			d.set(bd.Name, wait != nil)
			return wait, nil
		}
	}
	if err != nil {
		return nil, &scope.StepError{Step: scope.StepStore, Err: fmt.Errorf("check dependencies: %w", err)}
	}
	d.set(bd.Name, len(unmet) > 0)
	if len(unmet) == 0 {
		return nil, nil
	}
	msgs := make([]string, len(unmet))
	for i, u := range unmet {
		msgs[i] = u.Message
	}
	return &status.Failure{Kind: status.DependenciesUnmet, Message: strings.Join(msgs, "; ")}, nil
}

// unmet checks what a registry+v1 bundle declares it needs against the
// cluster: the APIs it serves and the packages the other
// BundleDeployments installed.
func (d *Dependencies) unmet(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, m *translate.BundleMetadata) ([]convert.Unmet, error) {
	facts := convert.Facts{Served: map[schema.GroupVersionKind]bool{}}
	for _, gvk := range convert.APIsNeeded(m.Dependencies) {
		ok, err := d.apis.Serves(ctx, gvk)
		if err != nil {
			return nil, err
		}
		facts.Served[gvk] = ok
	}
	installed, err := d.installedPackages(ctx, bd.Name)
	if err != nil {
		return nil, err
	}
	facts.Installed = installed
	return convert.CheckDependencies(m.Dependencies, facts), nil
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

func (d *Dependencies) set(name string, waiting bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if waiting {
		d.waiting[name] = true
	} else {
		delete(d.waiting, name)
	}
}

// Forget drops name from the waiting set.
func (d *Dependencies) Forget(name string) { d.set(name, false) }

// Waiting says whether name waits for a dependency.
func (d *Dependencies) Waiting(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.waiting[name]
}

// Wake maps any event to the waiting BundleDeployments.
func (d *Dependencies) Wake(context.Context, client.Object) []reconcile.Request {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]reconcile.Request, 0, len(d.waiting))
	for name := range d.waiting {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: name}})
	}
	return out
}
