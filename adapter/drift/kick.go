package drift

import (
	"bytes"
	"context"
	"fmt"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// KickManager is the field manager of the writes that ask for a re-apply.
const KickManager = "rukpak-kapp-drift"

// kick has kapp-controller re-apply app at once. kapp-controller (v0.53.1)
// deploys an App whenever its spec changed since the last run (generation
// differs from status.observedGeneration) and otherwise only at its sync
// period. `kctrl app kick` makes that change with two JSON patches, adding
// spec.paused=true and removing it again. One write does it here: an
// explicit spec.paused=false is added where it is absent and removed where
// it is there, which changes the stored spec, and so the generation, with
// the same meaning: the App is never paused, so neither a status write of
// kapp-controller's for the pause nor an adapter stopped between two writes
// can leave it so. The write carries the resourceVersion read, so a user's
// pause that came in between is never overwritten.
func kick(ctx context.Context, c client.Client, app *kappctrlv1alpha1.App) error {
	present := pausedSetByUs(app)
	for range 2 {
		before := app.Generation
		value := "false"
		if present {
			value = "null"
		}
		patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"spec":{"paused":%s}}`, app.ResourceVersion, value)
		if err := c.Patch(ctx, app, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner(KickManager)); err != nil {
			return fmt.Errorf("ask kapp-controller to re-apply App %s/%s: %w", app.Namespace, app.Name, err)
		}
		if app.Generation != before {
			return nil
		}
		// paused: false was already there, set by someone else: remove it.
		present = !present
	}
	return fmt.Errorf("ask kapp-controller to re-apply App %s/%s: its generation did not change", app.Namespace, app.Name)
}

// pausedSetByUs says whether the last kick left spec.paused=false in place,
// from the field ownership the API server records.
func pausedSetByUs(app *kappctrlv1alpha1.App) bool {
	for _, f := range app.ManagedFields {
		if f.Manager == KickManager && f.FieldsV1 != nil && bytes.Contains(f.FieldsV1.Raw, []byte(`"f:paused"`)) {
			return true
		}
	}
	return false
}
