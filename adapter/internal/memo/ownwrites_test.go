package memo

import "testing"

func TestOwnWrites(t *testing.T) {
	var w OwnWrites
	if w.Behind("a", "1") {
		t.Fatal("nothing written: behind")
	}
	w.Wrote("a", "1", "1")
	if w.Behind("a", "1") {
		t.Fatal("a write that patched nothing: behind")
	}
	w.Wrote("a", "1", "2")
	if !w.Behind("a", "1") {
		t.Fatal("the cache at the version the write replaced: not behind")
	}
	if !w.Behind("a", "1") {
		t.Fatal("asked again, still at that version: not behind")
	}
	if w.Behind("a", "2") || w.Remembers("a") {
		t.Fatal("the cache at the written version: behind, or still remembered")
	}
	if w.Behind("b", "1") {
		t.Fatal("another object: behind")
	}
}
