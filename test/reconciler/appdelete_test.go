package reconciler_test

import (
	"context"
	"sync"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
)

// heldApps are Apps whose delete a spec finishes itself.
var heldApps sync.Map

// holdApp keeps the stand-in below away from an App, so the spec can look
// at it while it is being deleted and let it go itself.
func holdApp(name string) {
	heldApps.Store(name, true)
	DeferCleanup(func() { heldApps.Delete(name) })
}

// standInForAppDeletes does, for this suite without kapp-controller, the
// last thing kapp-controller does for a deleted App: the adapter writes
// kapp-controller's finalizer with every App, and kapp-controller removes it
// once `kapp delete` (or, with noopDelete, nothing) is done. Nothing was
// installed here, so the finalizer goes at once.
func standInForAppDeletes(ctx context.Context) {
	go func() {
		defer GinkgoRecover()
		for ctx.Err() == nil {
			apps := &kappctrlv1alpha1.AppList{}
			if err := env.Client.List(ctx, apps); err == nil {
				for i := range apps.Items {
					app := &apps.Items[i]
					if _, held := heldApps.Load(app.Name); held || app.DeletionTimestamp.IsZero() {
						continue
					}
					before := app.DeepCopy()
					if controllerutil.RemoveFinalizer(app, translate.KappControllerFinalizer) {
						_ = env.Client.Patch(ctx, app, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
}
