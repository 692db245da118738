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
func addDriftRepair(mgr ctrl.Manager, systemNamespace string) error {
	appOf := func(_ context.Context, bd string) (client.ObjectKey, bool) {
		return client.ObjectKey{Namespace: systemNamespace, Name: bd}, bd != ""
	}
	meta, err := metadata.NewForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("drift repair: %w", err)
	}
	if err := mgr.Add(drift.New(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetCache(), meta, mgr.GetEventRecorder(FieldOwner), appOf)); err != nil {
		return fmt.Errorf("drift repair: %w", err)
	}
	return nil
}
