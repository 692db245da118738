package memo

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Keyed holds one V per BundleDeployment name. The zero value is empty and
// ready.
type Keyed[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

// Load is name's value, and whether there is one.
func (k *Keyed[V]) Load(name string) (V, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.m[name]
	return v, ok
}

// Store sets name's value.
func (k *Keyed[V]) Store(name string, v V) {
	k.Update(name, func(V, bool) V { return v })
}

// Update sets name's value to what f makes of the one there (ok says
// there was one) and returns it. f runs under the lock, so what it does
// alongside (a gauge moved from one bucket to another) is not interleaved with
// another Update or a Delete.
func (k *Keyed[V]) Update(name string, f func(old V, ok bool) V) V {
	k.mu.Lock()
	defer k.mu.Unlock()
	old, ok := k.m[name]
	v := f(old, ok)
	if k.m == nil {
		k.m = map[string]V{}
	}
	k.m[name] = v
	return v
}

// Delete drops name's value and returns it, and whether there was one.
func (k *Keyed[V]) Delete(name string) (V, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.m[name]
	delete(k.m, name)
	return v, ok
}

// Forget drops what is remembered of the BundleDeployment name: the
// Memory every owner of a memory offers.
func (k *Keyed[V]) Forget(name string, _ types.UID) { k.Delete(name) }

// Remembers says whether anything is remembered of name (the tests that
// check a BundleDeployment's removal forgets it everywhere).
func (k *Keyed[V]) Remembers(name string) bool {
	_, ok := k.Load(name)
	return ok
}

// Len is how many names are remembered.
func (k *Keyed[V]) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.m)
}
