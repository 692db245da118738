package drift

import (
	"context"
	"fmt"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// The one loop both parts of drift run (the Repairer's re-applies and the
// StallRepair's new runs): the App informer's events, through a handler
// that decides what is due, feed a queue of App keys, worked one at a time
// with backoff until the manager stops.

// newAppQueue is a queue of App keys whose failures back off from a second
// to maxRetry.
func newAppQueue(name string) workqueue.TypedRateLimitingInterface[client.ObjectKey] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[client.ObjectKey](time.Second, maxRetry),
		workqueue.TypedRateLimitingQueueConfig[client.ObjectKey]{Name: name})
}

// followApps sends the App informer's events to h and works q with do
// (what names it in the log) until ctx ends; for names the loop in
// errors. The caller shuts q down.
func followApps(ctx context.Context, ca cache.Cache, q workqueue.TypedRateLimitingInterface[client.ObjectKey], forWhat string,
	h toolscache.ResourceEventHandler, what string, do func(context.Context, client.ObjectKey) error) error {
	apps, err := ca.GetInformer(ctx, &kappctrlv1alpha1.App{})
	if err != nil {
		return fmt.Errorf("watch Apps for %s: %w", forWhat, err)
	}
	reg, err := apps.AddEventHandler(h)
	if err != nil {
		return fmt.Errorf("watch Apps for %s: %w", forWhat, err)
	}
	defer func() { _ = apps.RemoveEventHandler(reg) }()
	go func() {
		for work(ctx, q, what, do) {
		}
	}()
	<-ctx.Done()
	return nil
}

// work handles one App of q with do; false once q shuts down. A failure
// is logged and tried again with q's backoff.
func work(ctx context.Context, q workqueue.TypedRateLimitingInterface[client.ObjectKey], what string,
	do func(context.Context, client.ObjectKey) error) bool {
	key, quit := q.Get()
	if quit {
		return false
	}
	defer q.Done(key)
	if err := do(ctx, key); err != nil {
		log.FromContext(ctx).Error(err, what, "app", key.String())
		q.AddRateLimited(key)
		return true
	}
	q.Forget(key)
	return true
}
