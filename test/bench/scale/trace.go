package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// traceIdleWrites prints each write the adapter made at rest and, for each
// BundleDeployment written, its conditions and Events now: the audit log
// says which object was written, they say why. Its target is none, so any
// is worth a name.
func (b *bench) traceIdleWrites(ctx context.Context, out io.Writer, counts map[string]apiCount) error {
	a := counts["adapter"]
	if a.Writes == 0 {
		return nil
	}
	fmt.Fprintf(out, "adapter wrote %d times at rest (the first %d):\n", a.Writes, len(a.Written))
	var names []string
	for _, w := range a.Written {
		fmt.Fprintf(out, "  %s\n", w)
		name, err := b.bundleDeploymentOf(ctx, w)
		if err != nil {
			return err
		}
		if name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	for _, name := range names {
		bd := &rukpakv1alpha2.BundleDeployment{}
		if err := b.c.Get(ctx, client.ObjectKey{Name: name}, bd); err != nil {
			return fmt.Errorf("read BundleDeployment %s written at rest: %w", name, err)
		}
		fmt.Fprintf(out, "BundleDeployment %s (generation %d):\n", name, bd.Generation)
		for _, c := range bd.Status.Conditions {
			fmt.Fprintf(out, "  %s=%s %s since %s (generation %d): %s\n", c.Type, c.Status, c.Reason,
				c.LastTransitionTime.Format(time.TimeOnly), c.ObservedGeneration, c.Message)
		}
		events := &corev1.EventList{}
		if err := b.c.List(ctx, events, client.MatchingFields{"involvedObject.name": name}); err != nil {
			return fmt.Errorf("list Events of BundleDeployment %s: %w", name, err)
		}
		for _, e := range events.Items {
			// The adapter records through the events.k8s.io API, which sets
			// the event time and, for a repeated one, a series.
			at, seen := e.EventTime.Time, int32(1)
			if e.Series != nil {
				at, seen = e.Series.LastObservedTime.Time, e.Series.Count
			}
			fmt.Fprintf(out, "  Event %s %s %s (seen %d times): %s\n", at.Format(time.TimeOnly), e.Type, e.Reason, seen, e.Message)
		}
	}
	return nil
}

// bundleDeploymentOf names the BundleDeployment a write was about: the one
// written, or the one an Event written regards; "" for anything else.
func (b *bench) bundleDeploymentOf(ctx context.Context, w auditWrite) (string, error) {
	switch w.Resource {
	case "bundledeployments":
		return w.Name, nil
	case "events":
		e := &corev1.Event{}
		if err := b.c.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: w.Name}, e); err != nil {
			return "", fmt.Errorf("read Event %s written at rest: %w", w.Name, err)
		}
		if e.InvolvedObject.Kind == "BundleDeployment" {
			return e.InvolvedObject.Name, nil
		}
	}
	return "", nil
}
