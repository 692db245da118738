package fetch

import (
	"container/list"
	"sync"
)

// DigestCache keeps the unpacked files of recently fetched images by
// digest, so the same image (a re-created BundleDeployment, several BDs of
// one bundle, a moved tag that moved back) is not downloaded again. It is
// bounded by total bytes; the least recently used entries go first. A nil
// cache caches nothing.
type DigestCache struct {
	mu       sync.Mutex
	maxBytes int64
	bytes    int64
	order    *list.List // of *digestEntry, most recent first
	entries  map[string]*list.Element
}

type digestEntry struct {
	digest string
	files  Files
	size   int64
}

// NewDigestCache holds up to maxBytes of files.
func NewDigestCache(maxBytes int64) *DigestCache {
	return &DigestCache{maxBytes: maxBytes, order: list.New(), entries: map[string]*list.Element{}}
}

func (c *DigestCache) get(digest string) (Files, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[digest]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	// Callers may keep or change the map; the cached one stays intact.
	return copyFiles(el.Value.(*digestEntry).files), true
}

func (c *DigestCache) put(digest string, files Files) {
	if c == nil {
		return
	}
	var size int64
	for p, data := range files {
		size += int64(len(p) + len(data))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[digest]; ok || size > c.maxBytes {
		return
	}
	c.entries[digest] = c.order.PushFront(&digestEntry{digest: digest, files: copyFiles(files), size: size})
	c.bytes += size
	for c.bytes > c.maxBytes {
		last := c.order.Back()
		e := last.Value.(*digestEntry)
		c.order.Remove(last)
		delete(c.entries, e.digest)
		c.bytes -= e.size
	}
}

func copyFiles(in Files) Files {
	out := make(Files, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
