package bundledeployment

import (
	"context"
	"fmt"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/memo"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// The BundleDeployment reconciler's memories of each BundleDeployment. Each has one owner
// and a Forget; finish calls every Memory the BundleDeploymentReconciler holds.

// finish forgets the BundleDeployment and removes the finalizer: the one
// place a BundleDeployment leaves the adapter.
func (r *BundleDeploymentReconciler) finish(ctx context.Context, s *scope.Scope) error {
	for _, m := range r.memories() {
		m.Forget(s.BD.Name, s.BD.UID)
	}
	// NotFound: a second reconcile from a stale cache raced the first.
	if err := kube.PatchFinalizers(ctx, r.client, s.BD, controllerutil.RemoveFinalizer); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("remove finalizer: %w", err)
	}
	return nil
}

// memories are every Memory the BundleDeploymentReconciler holds.
func (r *BundleDeploymentReconciler) memories() []Memory {
	return []Memory{&r.placed, &r.progress, &r.states, &r.health, &r.written, r.waits, r.serve, r.custom}
}

// Memory is what is remembered of BundleDeployments between reconciles.
type Memory interface {
	// Forget drops what is remembered of the BundleDeployment name (uid).
	Forget(name string, uid types.UID)
}

// placement remembers which namespace each BundleDeployment's App lives in
// when Apps are spread over --app-namespaces. The answer never changes for
// a running adapter: an App that exists stays where it is, and a new one
// goes where translate.Placement puts it.
type placement struct{ memo.Keyed[string] }

// place finds where name's App lives, or is to be created, and remembers
// it. An App the cache (cached) does not hold is looked for through the
// API server (direct; nil: not) before a new one is placed: the cache may
// not have shown an App made just before its BundleDeployment yet, and a
// placement is never changed once made. That read is made once per
// BundleDeployment whose App is new. Without kapp-controller's API
// (appsServed false) no App can be read: the namespace a new App would
// get is said, and nothing is remembered, so the first look with the API
// served finds an App that exists.
func (p *placement) place(ctx context.Context, cached, direct client.Reader, cfg translate.Config, name string, appsServed bool) (string, error) {
	if len(cfg.AppNamespaces) == 0 {
		return cfg.SystemNamespace, nil
	}
	if ns, ok := p.Load(name); ok {
		return ns, nil
	}
	if !appsServed {
		return translate.Placement(cfg, name), nil
	}
	// Apps made before the namespaces were configured (or with other ones)
	// stay where they are.
	for _, r := range []client.Reader{cached, direct} {
		if r == nil {
			continue
		}
		for _, ns := range translate.Namespaces(cfg) {
			err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &kappctrlv1alpha1.App{})
			switch {
			case err == nil:
				p.Store(name, ns)
				return ns, nil
			case !apierrors.IsNotFound(err):
				return "", fmt.Errorf("find the App of %s in namespace %s: %w", name, ns, err)
			}
		}
	}
	ns := translate.Placement(cfg, name)
	p.Store(name, ns)
	return ns, nil
}

// progressClock remembers, per BundleDeployment generation, what the last
// look left of its work under way (status.Progress: since when the stored
// status is behind, whether progress was said): the facts the status
// computation's progress hold needs and the stored status cannot hold.
type progressClock struct{ memo.Keyed[generationProgress] }

type generationProgress struct {
	generation int64
	held       status.Progress
}

// held is what the last look left of bd's current generation.
func (p *progressClock) held(bd *rukpakv1alpha2.BundleDeployment) status.Progress {
	if g, ok := p.Load(bd.Name); ok && g.generation == bd.Generation {
		return g.held
	}
	return status.Progress{}
}

// keep remembers what this look leaves of bd's current generation.
func (p *progressClock) keep(bd *rukpakv1alpha2.BundleDeployment, held status.Progress) {
	p.Store(bd.Name, generationProgress{bd.Generation, held})
}
