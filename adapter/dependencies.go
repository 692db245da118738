package adapter

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

// unmetDependencies checks what a registry+v1 bundle declares it needs
// against the cluster: the APIs it serves and the packages the other
// BundleDeployments installed. It returns one sentence per unmet
// dependency.
func (r *Reconciler) unmetDependencies(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, m *translate.BundleMetadata) ([]string, error) {
	facts := convert.Facts{Served: map[schema.GroupVersionKind]bool{}}
	for _, gvk := range convert.APIsNeeded(m.Dependencies) {
		ok, err := r.apis.Serves(ctx, gvk)
		if err != nil {
			return nil, err
		}
		facts.Served[gvk] = ok
	}
	installed, err := r.installedPackages(ctx, bd.Name)
	if err != nil {
		return nil, err
	}
	facts.Installed = installed
	var out []string
	for _, u := range convert.CheckDependencies(m.Dependencies, facts) {
		out = append(out, u.Message)
	}
	return out, nil
}

// installedPackages are the registry+v1 bundles the other
// BundleDeployments' Apps deployed: a package is recognised by its bundle's
// package name and ClusterServiceVersion version, which the App records.
func (r *Reconciler) installedPackages(ctx context.Context, except string) ([]convert.InstalledPackage, error) {
	var all []kappctrlv1alpha1.App
	for _, ns := range r.lookIn() {
		apps := &kappctrlv1alpha1.AppList{}
		if err := r.client.List(ctx, apps, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("list Apps in namespace %s: %w", ns, err)
		}
		all = append(all, apps.Items...)
	}
	var out []convert.InstalledPackage
	for i := range all {
		app := &all[i]
		data, ok := app.Annotations[rukpakv1alpha2.AnnotationBundleMetadata]
		if !ok || app.Name == except || !deployedCurrent(app) {
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

// waitingSet holds the BundleDeployments waiting for dependencies, so that
// a change of what they wait for (an API served, a bundle installed) wakes
// them without an edit.
type waitingSet struct {
	mu    sync.Mutex
	names map[string]bool
}

func (w *waitingSet) set(name string, waiting bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.names == nil {
		w.names = map[string]bool{}
	}
	if waiting {
		w.names[name] = true
	} else {
		delete(w.names, name)
	}
}

// wake maps any event to the waiting BundleDeployments.
func (w *waitingSet) wake(context.Context, client.Object) []reconcile.Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]reconcile.Request, 0, len(w.names))
	for name := range w.names {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: name}})
	}
	return out
}
