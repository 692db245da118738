package memo

import (
	"sync"
	"testing"
)

func TestKeyed(t *testing.T) {
	var k Keyed[int]
	if _, ok := k.Load("a"); ok || k.Remembers("a") || k.Len() != 0 {
		t.Fatal("the zero Keyed remembers something")
	}
	k.Store("a", 1)
	if v, ok := k.Load("a"); !ok || v != 1 {
		t.Fatalf("Load(a) = %d, %t after Store(a, 1)", v, ok)
	}
	got := k.Update("a", func(old int, ok bool) int {
		if !ok || old != 1 {
			t.Errorf("Update saw %d, %t; want 1, true", old, ok)
		}
		return old + 1
	})
	if got != 2 {
		t.Fatalf("Update returned %d, want 2", got)
	}
	k.Update("b", func(old int, ok bool) int {
		if ok {
			t.Errorf("Update of a new name saw %d, true", old)
		}
		return 7
	})
	if v, ok := k.Delete("a"); !ok || v != 2 {
		t.Fatalf("Delete(a) = %d, %t; want 2, true", v, ok)
	}
	if _, ok := k.Delete("a"); ok {
		t.Fatal("a second Delete found a value")
	}
	k.Forget("b", "")
	if k.Remembers("b") || k.Len() != 0 {
		t.Fatal("Forget left b remembered")
	}
}

// TestKeyedUpdatesDoNotInterleave runs Updates side by side: every
// increment lands, which it would not if f ran outside the lock.
func TestKeyedUpdatesDoNotInterleave(t *testing.T) {
	var k Keyed[int]
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				k.Update("n", func(old int, _ bool) int { return old + 1 })
			}
		}()
	}
	wg.Wait()
	if v, _ := k.Load("n"); v != 8000 {
		t.Fatalf("n = %d after 8000 increments", v)
	}
}
