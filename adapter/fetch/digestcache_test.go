package fetch

import "testing"

func TestDigestCache_EvictsLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	c := NewDigestCache(30)
	c.put("a", Files{"f": make([]byte, 9)}) // 10 bytes with its name
	c.put("b", Files{"f": make([]byte, 9)})
	c.put("c", Files{"f": make([]byte, 9)})
	if _, ok := c.get("a"); !ok {
		t.Fatal("a should still fit")
	}
	c.put("d", Files{"f": make([]byte, 9)}) // evicts b, the least recently used
	if _, ok := c.get("b"); ok {
		t.Error("b should have been evicted")
	}
	for _, d := range []string{"a", "c", "d"} {
		if _, ok := c.get(d); !ok {
			t.Errorf("%s missing", d)
		}
	}
	c.put("huge", Files{"f": make([]byte, 100)})
	if _, ok := c.get("huge"); ok {
		t.Error("an entry over the whole budget is not kept")
	}
	files, _ := c.get("a")
	files["g"] = nil
	if again, _ := c.get("a"); len(again) != 1 {
		t.Error("callers must not change the cached files")
	}
	var none *DigestCache
	none.put("x", Files{})
	if _, ok := none.get("x"); ok {
		t.Error("a nil cache caches nothing")
	}
}
