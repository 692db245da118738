package adapter

import (
	"context"
	"fmt"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Finalizer holds a BundleDeployment until its App, and with it everything
// it installed, is gone.
const Finalizer = "core.rukpak.io/uninstall"

// patchFinalizers changes bd's finalizers with an optimistic lock: the
// patch carries the resourceVersion read, so a finalizer another controller
// added since is never dropped by a list written from a stale cache; the
// conflict is retried with backoff instead.
func (r *Reconciler) patchFinalizers(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, change func(client.Object, string) bool) error {
	before := bd.DeepCopy()
	if !change(bd, Finalizer) {
		return nil
	}
	return r.client.Patch(ctx, bd, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), client.FieldOwner(FieldOwner))
}

// finalize deletes the App and waits, through the App watch, until
// kapp-controller has removed everything it installed.
func (r *Reconciler) finalize(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) error {
	if !controllerutil.ContainsFinalizer(bd, Finalizer) {
		return nil
	}
	if waits, err := r.finalizePackage(ctx, bd); waits || err != nil {
		return err
	}
	app, err := r.liveApp(ctx, bd.Name)
	if err != nil {
		return err
	}
	if app == nil {
		return r.letGo(ctx, bd)
	}
	if app.DeletionTimestamp.IsZero() {
		if err := r.client.Delete(ctx, app); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete App %s/%s: %w", app.Namespace, app.Name, err)
		}
	}
	out := status.Compute(status.Facts{BD: bd, App: app, Now: r.now()})
	return r.writeStatus(ctx, bd, out.Status)
}

// letGo forgets bd and removes the finalizer.
func (r *Reconciler) letGo(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) error {
	r.cache.forget(bd.UID)
	r.states.forget(bd.Name)
	r.progress.forget(bd.Name)
	r.forgetPlacement(bd.Name)
	r.waiting.set(bd.Name, false)
	// NotFound: a second reconcile from a stale cache raced the first.
	if err := r.patchFinalizers(ctx, bd, controllerutil.RemoveFinalizer); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("remove finalizer: %w", err)
	}
	return nil
}

// liveApp is bd's App, nil when there is none. The informer cache may not
// have seen an App this adapter created a moment ago, and "no App" decides
// how one is made (a take-over, the style of its objects), so that answer
// is confirmed with the API server.
func (r *Reconciler) liveApp(ctx context.Context, name string) (*kappctrlv1alpha1.App, error) {
	key := client.ObjectKey{Namespace: r.appNS(name), Name: name}
	app := &kappctrlv1alpha1.App{}
	err := r.client.Get(ctx, key, app)
	if apierrors.IsNotFound(err) {
		err = r.direct.Get(ctx, key, app)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get App %s/%s: %w", key.Namespace, name, err)
	}
	return app, nil
}
