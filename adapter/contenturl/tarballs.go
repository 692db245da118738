package contenturl

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Key names one object's content: its UID, so that a new object of the
// same name never gets the old one's bytes, and what the content was made
// from (Version), so that an object pointing elsewhere now (an upgraded
// BundleDeployment) does not either.
type Key struct {
	UID     types.UID
	Version string
}

// VersionOf is a Key's Version for content made from parts (the class and
// the pinned source, say), each encoded as JSON.
func VersionOf(parts ...any) string {
	h := sha256.New()
	for _, p := range parts {
		data, err := json.Marshal(p)
		if err != nil {
			// Only API types are passed; they always encode.
			data = fmt.Appendf(nil, "%#v", p)
		}
		h.Write(data)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:20]
}

var (
	// ErrNotStored: the content of that key is not kept here.
	ErrNotStored = errors.New("the content is not stored on this replica")
	// ErrFull: the content does not fit, even after dropping everything
	// that may be dropped.
	ErrFull = errors.New("the adapter's content store is full")
)

// Tarballs keeps content as gzipped tarballs in one directory, at most one
// per object, within maxBytes. It is safe for concurrent use.
type Tarballs struct {
	dir string
	max int64

	mu      sync.Mutex
	entries map[types.UID]*entry
	used    int64
	tick    uint64
}

type entry struct {
	version string
	path    string
	size    int64
	made    time.Time
	// pinned: made by this replica's unpack, which reports the object
	// Unpacked because it is here; never dropped to make room.
	pinned bool
	// last orders the entries that may be dropped, least recently used first.
	last uint64
}

// Info describes stored content.
type Info struct {
	Size int64
	Made time.Time
}

// NewTarballs keeps content in dir, emptied first: nothing records what a
// previous process's files were made from, and its unpacks are fetched
// again from their pinned sources.
func NewTarballs(dir string, maxBytes int64) (*Tarballs, error) {
	if maxBytes <= 0 {
		return nil, fmt.Errorf("content store: the size limit must be positive, got %d bytes", maxBytes)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("content store: %w", err)
	}
	old, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("content store: %w", err)
	}
	for _, e := range old {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return nil, fmt.Errorf("content store: empty %s: %w", dir, err)
		}
	}
	return &Tarballs{dir: dir, max: maxBytes, entries: map[types.UID]*entry{}}, nil
}

// Put keeps files as k's content, in place of any other content of k's
// object. pinned is set for content this replica's unpack made; other
// content (fetched again for a request) may be dropped to make room. It
// returns the tarball's size.
func (s *Tarballs) Put(k Key, files map[string][]byte, pinned bool) (int64, error) {
	if k.UID == "" || k.Version == "" {
		return 0, errors.New("content store: a key needs a UID and a version")
	}
	if size, ok := s.keep(k, pinned); ok {
		return size, nil
	}
	tmp, err := os.CreateTemp(s.dir, ".put-*")
	if err != nil {
		return 0, fmt.Errorf("content store: %w", err)
	}
	written := false
	defer func() {
		if !written {
			_ = os.Remove(tmp.Name())
		}
	}()
	err = writeTarGz(tmp, files)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("content store: write the tarball: %w", err)
	}
	st, err := os.Stat(tmp.Name())
	if err != nil {
		return 0, fmt.Errorf("content store: %w", err)
	}
	size := st.Size()

	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.entries[k.UID]
	if old != nil && old.version == k.Version {
		// Another call stored the same content meanwhile.
		old.pinned = old.pinned || pinned
		return old.size, nil
	}
	if pinnedElsewhere := s.pinnedBytes(k.UID); pinnedElsewhere+size > s.max {
		// Nothing that may be dropped would make room: drop nothing.
		return 0, fmt.Errorf("%w: %d bytes do not fit in %d, of which %d hold content this replica unpacked; "+
			"delete Bundles that are no longer needed, or raise --content-max-bytes", ErrFull, size, s.max, pinnedElsewhere)
	}
	used := s.used
	if old != nil {
		used -= old.size
	}
	for used+size > s.max {
		victim := s.leastRecent(k.UID)
		used -= s.entries[victim].size
		s.drop(victim)
	}
	final := filepath.Join(s.dir, fmt.Sprintf("%s-%s.tgz", k.UID, k.Version))
	if err := os.Rename(tmp.Name(), final); err != nil {
		return 0, fmt.Errorf("content store: %w", err)
	}
	written = true
	if old != nil {
		s.drop(k.UID)
	}
	s.tick++
	s.entries[k.UID] = &entry{version: k.Version, path: final, size: size, made: time.Now(), pinned: pinned, last: s.tick}
	s.used += size
	return size, nil
}

// keep marks k's content used (and pinned, when asked) if it is stored.
func (s *Tarballs) keep(k Key, pinned bool) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[k.UID]
	if e == nil || e.version != k.Version {
		return 0, false
	}
	e.pinned = e.pinned || pinned
	s.tick++
	e.last = s.tick
	return e.size, true
}

// leastRecent is the entry that may be dropped and was used longest ago,
// other than keep's; "" when there is none.
func (s *Tarballs) leastRecent(keep types.UID) types.UID {
	var victim types.UID
	var last uint64
	for uid, e := range s.entries {
		if uid == keep || e.pinned {
			continue
		}
		if victim == "" || e.last < last {
			victim, last = uid, e.last
		}
	}
	return victim
}

func (s *Tarballs) pinnedBytes(except types.UID) int64 {
	var n int64
	for uid, e := range s.entries {
		if e.pinned && uid != except {
			n += e.size
		}
	}
	return n
}

// drop removes uid's entry and file. A reader that opened the file keeps
// reading it.
func (s *Tarballs) drop(uid types.UID) {
	e := s.entries[uid]
	if e == nil {
		return
	}
	_ = os.Remove(e.path)
	s.used -= e.size
	delete(s.entries, uid)
}

// Has says whether k's content is stored, and whether it is pinned.
func (s *Tarballs) Has(k Key) (stored, pinned bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[k.UID]
	if e == nil || e.version != k.Version {
		return false, false
	}
	return true, e.pinned
}

// Pin marks k's content as this replica's unpack's, if it is stored (a
// request may have fetched it first), and says whether it is.
func (s *Tarballs) Pin(k Key) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[k.UID]
	if e == nil || e.version != k.Version {
		return false
	}
	e.pinned = true
	return true
}

// Open opens k's content for reading; ErrNotStored when it is not kept.
func (s *Tarballs) Open(k Key) (*os.File, Info, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[k.UID]
	if e == nil || e.version != k.Version {
		return nil, Info{}, ErrNotStored
	}
	f, err := os.Open(e.path)
	if err != nil {
		return nil, Info{}, fmt.Errorf("content store: %w", err)
	}
	s.tick++
	e.last = s.tick
	return f, Info{Size: e.size, Made: e.made}, nil
}

// Forget drops whatever is stored for the object uid.
func (s *Tarballs) Forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drop(uid)
}

// Used is how many bytes the stored tarballs take, and how many objects
// have content stored.
func (s *Tarballs) Used() (bytes int64, objects int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used, len(s.entries)
}
