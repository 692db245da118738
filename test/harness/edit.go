package harness

import (
	"context"
	"fmt"

	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Edit is a user's edit of an object that a controller also writes (its
// status, a finalizer): read, change, write, and on a conflict read and
// change again, as the user whose `kubectl replace` or `kctrl` command was
// refused runs it again. obj names the object and holds what was written.
func Edit[T client.Object](ctx context.Context, c client.Client, obj T, change func(T)) error {
	key := client.ObjectKeyFromObject(obj)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, key, obj); err != nil {
			return err
		}
		change(obj)
		return c.Update(ctx, obj)
	})
	if err != nil {
		return fmt.Errorf("edit %T %s: %w", obj, key, err)
	}
	return nil
}
