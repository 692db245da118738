package adapter

import (
	"context"
	"fmt"

	"k8s.io/client-go/metadata"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/drift"
)

// addDriftRepair runs the drift repair (package drift) beside the
// reconciler: kapp-controller never watches what it installed, so without
// it a deleted or edited object stays so until the App's sync period.
func addDriftRepair(mgr ctrl.Manager, appOf func(context.Context, string) (client.ObjectKey, bool)) error {
	meta, err := metadata.NewForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("drift repair: %w", err)
	}
	if err := mgr.Add(drift.New(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetCache(), meta, mgr.GetEventRecorder(FieldOwner), appOf)); err != nil {
		return fmt.Errorf("drift repair: %w", err)
	}
	return nil
}

// appKey names the App of the BundleDeployment bd.
func (r *Reconciler) appKey(ctx context.Context, bd string) (client.ObjectKey, bool) {
	if bd == "" {
		return client.ObjectKey{}, false
	}
	ns, err := r.place(ctx, bd)
	if err != nil {
		return client.ObjectKey{}, false
	}
	return client.ObjectKey{Namespace: ns, Name: bd}, true
}
