package harness

import (
	"context"
	"fmt"

	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Edit is a user's edit of an object that a controller also writes (its
// status, a finalizer): change, write, and on a conflict read, change and
// write again, as the user whose `kubectl replace` or `kctrl` command was
// refused runs it again. obj names the object; when it was read already
// (it has a resourceVersion) the first write is of that copy. It holds
// what was written.
func Edit[T client.Object](ctx context.Context, c client.Client, obj T, change func(T)) error {
	key := client.ObjectKeyFromObject(obj)
	read := obj.GetResourceVersion() != ""
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if !read {
			if err := c.Get(ctx, key, obj); err != nil {
				return err
			}
		}
		read = false
		change(obj)
		return c.Update(ctx, obj)
	})
	if err != nil {
		return fmt.Errorf("edit %T %s: %w", obj, key, err)
	}
	return nil
}
