package adapter

import (
	"context"
	"fmt"
	"slices"
	"sync"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
)

// placement remembers which namespace each BundleDeployment's App lives in
// when Apps are spread over --app-namespaces. The answer never changes for
// a running adapter: an App that exists stays where it is, and a new one
// goes where translate.Placement puts it.
type placement struct{ byName sync.Map }

// place finds where name's App lives, or is to be created, and remembers it.
func (r *Reconciler) place(ctx context.Context, name string) (string, error) {
	if len(r.cfg.AppNamespaces) == 0 {
		return r.cfg.SystemNamespace, nil
	}
	if ns, ok := r.placed.byName.Load(name); ok {
		return ns.(string), nil
	}
	// Apps made before the namespaces were configured (or with other ones)
	// stay where they are.
	for _, ns := range r.lookIn() {
		err := r.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &kappctrlv1alpha1.App{})
		switch {
		case err == nil:
			r.placed.byName.Store(name, ns)
			return ns, nil
		case !apierrors.IsNotFound(err):
			return "", fmt.Errorf("find the App of %s in namespace %s: %w", name, ns, err)
		}
	}
	ns := translate.Placement(r.cfg, name)
	r.placed.byName.Store(name, ns)
	return ns, nil
}

// appNS is where name's App lives; place has run for name in this reconcile.
func (r *Reconciler) appNS(name string) string {
	if ns, ok := r.placed.byName.Load(name); ok {
		return ns.(string)
	}
	return translate.Placement(r.cfg, name)
}

// forgetPlacement drops what is remembered of name, once its App is gone.
func (r *Reconciler) forgetPlacement(name string) { r.placed.byName.Delete(name) }

// lookIn are the namespaces an App may be in.
func (r *Reconciler) lookIn() []string {
	out := []string{r.cfg.SystemNamespace}
	for _, ns := range r.cfg.AppNamespaces {
		if !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}

// appConfig is the translation's configuration for name's App.
func (r *Reconciler) appConfig(name string) translate.Config {
	cfg := r.cfg
	cfg.AppNamespace = r.appNS(name)
	return cfg
}
