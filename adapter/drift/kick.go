package drift

import (
	"bytes"
	"context"
	"fmt"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
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
// pause that came in between is never overwritten. It also records the
// request (annotation core.rukpak.io/rerun: the generation whose run the
// status reports, when, why), so the status computation knows the App's
// status still reports the same spec until kapp-controller picks it up.
// kapp-controller interrupts no run for it: a run under way ends first.
func kick(ctx context.Context, c client.Client, app *kappctrlv1alpha1.App, why string) error {
	present := pausedSetByUs(app)
	asked := status.Rerun{Generation: app.Generation, At: time.Now(), Why: why}.String()
	for range 2 {
		before := app.Generation
		value := "false"
		if present {
			value = "null"
		}
		patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"annotations":{%q:%q}},"spec":{"paused":%s}}`,
			app.ResourceVersion, rukpakv1alpha2.AnnotationRerun, asked, value)
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

// markHeld records on app that its pending request r, made during a
// template step, was left waiting by a kapp-controller with nothing else
// to run (see probe.heldCheck): the step still runs. It changes no spec.
func markHeld(ctx context.Context, c client.Client, app *kappctrlv1alpha1.App, r status.Rerun) error {
	r.Why = status.RerunHeld
	patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"annotations":{%q:%q}}}`, app.ResourceVersion, rukpakv1alpha2.AnnotationRerun, r.String())
	if err := c.Patch(ctx, app, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner(KickManager)); err != nil {
		return fmt.Errorf("record that kapp-controller still runs App %s/%s: %w", app.Namespace, app.Name, err)
	}
	return nil
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
