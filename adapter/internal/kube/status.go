package kube

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fieldowner"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// WriteStatus stores the computed status when it differs from what was
// read, recording an Event for the transition (recorder may be nil).
func WriteStatus(ctx context.Context, c client.Client, recorder events.EventRecorder, bd *rukpakv1alpha2.BundleDeployment, st rukpakv1alpha2.BundleDeploymentStatus) error {
	if apiequality.Semantic.DeepEqual(bd.Status, st) {
		return nil
	}
	before := bd.DeepCopy()
	bd.Status = st
	if err := PatchStatus(ctx, c, bd, before); err != nil {
		return fmt.Errorf("update status: %w", err)
	}
	recordTransitions(ctx, recorder, bd, before.Status.Conditions, bd.Status.Conditions, reportedTypes)
	return nil
}

// PatchStatus writes obj's status subresource as changed from before (a
// merge patch under the adapter's field owner): the one status write of
// the adapter, whichever object and API generation it is for. The patch
// carries the resourceVersion read, so a reconcile that read a stale copy
// (the cache behind a write of its own, or of another replica) gets a
// conflict instead of writing over a newer status; the caller looks again.
func PatchStatus(ctx context.Context, c client.Client, obj, before client.Object) error {
	return c.Status().Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}), client.FieldOwner(fieldowner.Name))
}

// ConditionsWriter is the status write of the controllers alongside the
// BundleDeployment reconciler (an OperatorCatalog's), given to them by adapter.NewManager: obj's
// status as changed from before, through PatchStatus (locked by the
// resourceVersion read), and one Event for the transition of the
// conditions of types (recorder may be nil).
func ConditionsWriter(c client.Client, recorder events.EventRecorder, types ...string) func(ctx context.Context, obj, before client.Object, was, now []metav1.Condition) error {
	return func(ctx context.Context, obj, before client.Object, was, now []metav1.Condition) error {
		if err := PatchStatus(ctx, c, obj, before); err != nil {
			return err
		}
		recordTransitions(ctx, recorder, obj, was, now, types)
		return nil
	}
}

// reportedTypes are the conditions a v1alpha2 BundleDeployment's Events
// report, the most telling first.
var reportedTypes = []string{rukpakv1alpha2.TypeInstalled, rukpakv1alpha2.TypeHealthy, rukpakv1alpha2.TypeUnpacked}

// recordTransitions logs each condition of types that changed and emits one
// Event about regarding for the write: one API write per transition of the
// BundleDeployment, not one per condition. Its reason is the most telling
// changed condition's (a failure first, then in the order of types) and its
// message lists every change.
func recordTransitions(ctx context.Context, recorder events.EventRecorder, regarding runtime.Object, before, after []metav1.Condition, types []string) {
	// The reconcile logger already names the BundleDeployment on every line.
	log := logf.FromContext(ctx)
	var lead *metav1.Condition
	var parts []string
	warning := false
	for _, t := range types {
		now := apimeta.FindStatusCondition(after, t)
		old := apimeta.FindStatusCondition(before, t)
		if now == nil || (old != nil && old.Reason == now.Reason && old.Status == now.Status) {
			continue
		}
		log.Info("condition changed", "type", t, "status", now.Status, "reason", now.Reason, "message", now.Message)
		parts = append(parts, t+": "+now.Message)
		failed := now.Status == metav1.ConditionFalse && !slices.Contains(quietReasons, now.Reason)
		if lead == nil || (failed && !warning) {
			lead = now
			warning = warning || failed
		}
	}
	if lead == nil || recorder == nil {
		return
	}
	kind := corev1.EventTypeNormal
	if warning {
		kind = corev1.EventTypeWarning
	}
	recorder.Eventf(regarding, nil, kind, lead.Reason, lead.Type, "%s", status.Shorten(strings.Join(parts, "; "), eventNoteLimit))
}

// eventNoteLimit is the Events API's bound on a note, in bytes; the API
// server refuses a longer one, and the Event is lost.
const eventNoteLimit = 1024

// quietReasons are False conditions that report no failure of their own.
var quietReasons = []string{
	rukpakv1alpha2.ReasonUnpackPending, rukpakv1alpha2.ReasonUnpacking, rukpakv1alpha2.ReasonInstallationStatusFalse, rukpakv1alpha2.ReasonDeleting,
}
