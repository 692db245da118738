package kube

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// WriteV1alpha1Status stores the status of a BundleDeployment of rukpak's
// first API, bd as read (its stored v1alpha2 form), when it differs from
// what was read. It is written at v1alpha1, through the conversion webhook:
// activeBundle has no field at v1alpha2, and the conversion keeps it in its
// own annotation as part of the same write, so the status a v1alpha1
// reader sees is always whole. Events are recorded as WriteStatus records
// them, with HasValidBundle in Unpacked's place.
func WriteV1alpha1Status(ctx context.Context, c client.Client, recorder events.EventRecorder, bd *rukpakv1alpha2.BundleDeployment, st rukpakv1alpha1.BundleDeploymentStatus) error {
	before := rukpakv1alpha1.FromV1alpha2(bd)
	if apiequality.Semantic.DeepEqual(before.Status, st) {
		return nil
	}
	after := before.DeepCopy()
	after.Status = st
	if err := PatchStatus(ctx, c, after, before); err != nil {
		return fmt.Errorf("update status at %s: %w", rukpakv1alpha1.GroupVersion, err)
	}
	// One object at both generations: bd now is the version written.
	bd.ResourceVersion = after.ResourceVersion
	recordTransitions(ctx, recorder, bd, before.Status.Conditions, st.Conditions, v1alpha1Types)
	return nil
}

var v1alpha1Types = []string{rukpakv1alpha1.TypeInstalled, rukpakv1alpha1.TypeHealthy, rukpakv1alpha1.TypeHasValidBundle}

// WriteBundleStatus stores the status of a Bundle on its own when it
// differs from what was read, recording an Event for an Unpacked
// transition as WriteStatus records a BundleDeployment's.
func WriteBundleStatus(ctx context.Context, c client.Client, recorder events.EventRecorder, b *rukpakv1alpha1.Bundle, st rukpakv1alpha1.BundleStatus) error {
	if apiequality.Semantic.DeepEqual(b.Status, st) {
		return nil
	}
	before := b.DeepCopy()
	after := b.DeepCopy()
	after.Status = st
	if err := PatchStatus(ctx, c, after, before); err != nil {
		return fmt.Errorf("update the status of the Bundle %s: %w", b.Name, err)
	}
	// b now is the version written.
	b.ResourceVersion = after.ResourceVersion
	if c := apimeta.FindStatusCondition(st.Conditions, rukpakv1alpha1.TypeUnpacked); c == nil || c.Reason != rukpakv1alpha1.ReasonUnpacking {
		// An Event tells the outcome, not that a fetch runs.
		recordTransitions(ctx, recorder, after, before.Status.Conditions, st.Conditions, bundleTypes)
	}
	return nil
}

var bundleTypes = []string{rukpakv1alpha1.TypeUnpacked}
