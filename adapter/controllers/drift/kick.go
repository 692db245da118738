package drift

import (
	"bytes"
	"context"
	"fmt"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	return kickWith(ctx, c, app, why, "")
}

// kickCanceling is kick for a run under way that cannot succeed: what it
// applied was deleted under it, and kapp retries its write of that for a
// minute before it fails. kapp-controller kills a deploy whose App becomes
// canceled, so the kick also sets spec.canceled, and a second write clears
// it at once: kapp-controller's watch of the App during the deploy sees
// both, stops the run, and runs the App again at the new generation. A
// step kapp-controller cannot cancel (fetch, template; its watch starts
// with the deploy) ends first, as after a kick. The rerun annotation says
// the request spans both writes; a canceled=true left by an adapter
// stopped between them is cleared by the next repair (canceledByUs).
func kickCanceling(ctx context.Context, c client.Client, api client.Reader, app *kappctrlv1alpha1.App) error {
	if err := kickWith(ctx, c, app, status.RerunCanceled, `,"canceled":true`); err != nil {
		return err
	}
	return uncancel(ctx, c, api, app)
}

// uncancel clears the spec.canceled drift repair set on app, reading it
// again after a conflict (kapp-controller writes its status meanwhile).
func uncancel(ctx context.Context, c client.Client, api client.Reader, app *kappctrlv1alpha1.App) error {
	for range 5 {
		if !canceledByUs(app) {
			return nil
		}
		patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q},"spec":{"canceled":null}}`, app.ResourceVersion)
		err := c.Patch(ctx, app, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner(KickManager))
		if !apierrors.IsConflict(err) {
			if err != nil {
				return fmt.Errorf("let kapp-controller run App %s/%s again after canceling its run: %w", app.Namespace, app.Name, err)
			}
			return nil
		}
		if err := api.Get(ctx, client.ObjectKeyFromObject(app), app); err != nil {
			return fmt.Errorf("let kapp-controller run App %s/%s again after canceling its run: %w", app.Namespace, app.Name, err)
		}
	}
	return fmt.Errorf("let kapp-controller run App %s/%s again after canceling its run: its status kept changing", app.Namespace, app.Name)
}

func kickWith(ctx context.Context, c client.Client, app *kappctrlv1alpha1.App, why, extra string) error {
	present := pausedSetByUs(app)
	asked := status.Rerun{Generation: app.Generation, At: time.Now(), Why: why}.String()
	for range 2 {
		before := app.Generation
		value := "false"
		if present {
			value = "null"
		}
		patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"annotations":{%q:%q}},"spec":{"paused":%s%s}}`,
			app.ResourceVersion, rukpakv1alpha2.AnnotationRerun, asked, value, extra)
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
func pausedSetByUs(app *kappctrlv1alpha1.App) bool { return ownsField(app, `"f:paused"`) }

// canceledByUs says spec.canceled=true is drift repair's (kickCanceling),
// not a user's.
func canceledByUs(app *kappctrlv1alpha1.App) bool {
	return app.Spec.Canceled && ownsField(app, `"f:canceled"`)
}

func ownsField(app *kappctrlv1alpha1.App, field string) bool {
	for _, f := range app.ManagedFields {
		if f.Manager == KickManager && f.FieldsV1 != nil && bytes.Contains(f.FieldsV1.Raw, []byte(field)) {
			return true
		}
	}
	return false
}
