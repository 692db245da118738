package kube

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// EnqueueMatching sends the objects of list's kind that which picks, as c lists them
// now, reconciled again: each is sent to to, the channel source of their
// controller. It lists before it returns (a failure is the caller's to
// retry) and sends from a goroutine of its own, which gives up when ctx
// ends: the channel is unbuffered, its controller may not have started yet
// or be busy, and the caller (a watch's change, a runnable) must not wait
// for it.
func EnqueueMatching[T client.Object](ctx context.Context, c client.Reader, list client.ObjectList, which func(T) bool, to chan<- event.GenericEvent) error {
	kind := strings.TrimSuffix(reflect.Indirect(reflect.ValueOf(list)).Type().Name(), "List")
	if err := c.List(ctx, list); err != nil {
		return fmt.Errorf("list the %ss to wake: %w", kind, err)
	}
	items, err := apimeta.ExtractList(list)
	if err != nil {
		return fmt.Errorf("read the %ss to wake: %w", kind, err)
	}
	var picked []T
	for _, item := range items {
		o, ok := item.(T)
		if !ok {
			return fmt.Errorf("a %s list holds a %T, not what is to wake", kind, item)
		}
		if which(o) {
			picked = append(picked, o)
		}
	}
	go func() {
		for _, o := range picked {
			// An ended context wins over a reader that is ready: select
			// picks among ready cases at random.
			if ctx.Err() != nil {
				return
			}
			select {
			case to <- event.GenericEvent{Object: o}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return nil
}
