package main

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// driftBound is how long a repair may take before it counts as missing.
const driftBound = time.Minute

// driftResult is one system's repairs: of deleted ConfigMaps and of
// Deployments whose replicas were edited.
type driftResult struct {
	Deleted, Edited []time.Duration
	Missing         int
}

func (d *driftResult) count() int { return len(d.Deleted) + len(d.Edited) + d.Missing }

func (d *driftResult) all() []time.Duration {
	return sortedDurations(append(append([]time.Duration(nil), d.Deleted...), d.Edited...))
}

// repairs says whether s repairs drift at once: the floor's Apps have no
// adapter watching what they installed, so only their sync period would.
func repairs(s system) bool { return s.Name() != "floor" }

// drift deletes the ConfigMap of one bundle, then edits the replicas of
// the next bundle's Deployment, and so on for b.repairs objects of as many
// bundles (from bundle 1 on: bundle 0 took the change), one after the
// other, timing each until it is restored, seen by polling every 100 ms.
func (b *bench) drift(ctx context.Context, s system) (*driftResult, error) {
	ns := namespaceOf(s)
	res := &driftResult{}
	for i := 1; i <= b.repairs; i++ {
		key := client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("bench-%04d", i)}
		var restored func() bool
		if i%2 == 1 {
			if err := b.c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name}}); err != nil {
				return nil, fmt.Errorf("delete ConfigMap %s: %w", key, err)
			}
			restored = func() bool { return b.c.Get(ctx, key, &corev1.ConfigMap{}) == nil }
		} else {
			d := &appsv1.Deployment{}
			if err := b.c.Get(ctx, key, d); err != nil {
				return nil, fmt.Errorf("read Deployment %s: %w", key, err)
			}
			before := d.DeepCopy()
			d.Spec.Replicas = ptr.To[int32](3)
			if err := b.c.Patch(ctx, d, client.MergeFrom(before), client.FieldOwner("bench-drift")); err != nil {
				return nil, fmt.Errorf("edit Deployment %s: %w", key, err)
			}
			restored = func() bool {
				d := &appsv1.Deployment{}
				return b.c.Get(ctx, key, d) == nil && d.Spec.Replicas != nil && *d.Spec.Replicas == 1
			}
		}
		start := time.Now()
		ok := restored()
		for !ok && time.Since(start) < driftBound && ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
			ok = restored()
		}
		took := time.Since(start)
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case !ok:
			res.Missing++
		case i%2 == 1:
			res.Deleted = append(res.Deleted, took)
		default:
			res.Edited = append(res.Edited, took)
		}
	}
	return res, nil
}
