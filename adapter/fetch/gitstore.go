package fetch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/memory"
)

// errFetchLimit stops a git fetch at Limits.MaxFetchBytes; FetchGit turns
// it into a message that says what to do.
var errFetchLimit = errors.New("git fetch over its byte limit")

// objectCacheBytes bounds the inflated objects kept while the tree is read;
// a blob is read once, so the cache only spares re-inflating delta bases.
const objectCacheBytes = 16 * cache.MiByte

// gitStore keeps a fetched repository in memory: references, config and
// the shallow list in go-git's memory storage, objects in the packfiles the
// server sent, compressed, each object inflated only when it is read. (go-git's
// memory storage holds every object inflated, so a history takes many times
// its packed size; its filesystem storage on an in-memory filesystem grows
// each packfile by copying it.) It counts the packfile bytes received across
// every fetch into it, so memory stays near that count, and a fetch that
// would pass the limit fails with errFetchLimit.
type gitStore struct {
	*memory.Storage
	limit, received int64
	packs           []*packfile.Packfile
	cache           cache.Object
}

func newGitStore(limit int64) *gitStore {
	return &gitStore{Storage: memory.NewStorage(), limit: limit, cache: cache.NewObjectLRU(objectCacheBytes)}
}

// PackfileWriter is what go-git writes a fetched packfile to when the
// storage offers it, so every byte of a fetch passes through here.
func (s *gitStore) PackfileWriter() (io.WriteCloser, error) {
	return &packWriter{store: s}, nil
}

func (s *gitStore) packOf(h plumbing.Hash) *packfile.Packfile {
	for _, p := range s.packs {
		if ok, _ := p.Contains(h); ok {
			return p
		}
	}
	return nil
}

func (s *gitStore) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	p := s.packOf(h)
	if p == nil {
		return s.Storage.EncodedObject(t, h)
	}
	obj, err := p.Get(h)
	if err != nil {
		return nil, err
	}
	if t != plumbing.AnyObject && obj.Type() != t {
		return nil, plumbing.ErrObjectNotFound
	}
	return obj, nil
}

func (s *gitStore) HasEncodedObject(h plumbing.Hash) error {
	if s.packOf(h) != nil {
		return nil
	}
	return s.Storage.HasEncodedObject(h)
}

// EncodedObjectSize reads only the object's header, so a blob's size can be
// checked before it is inflated.
func (s *gitStore) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	p := s.packOf(h)
	if p == nil {
		return s.Storage.EncodedObjectSize(h)
	}
	offset, err := p.FindOffset(h)
	if err != nil {
		return 0, err
	}
	return p.GetSizeByOffset(offset)
}

func (s *gitStore) IterEncodedObjects(t plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	var iters []storer.EncodedObjectIter
	for _, p := range s.packs {
		it, err := p.GetByType(t)
		if err != nil {
			return nil, err
		}
		iters = append(iters, it)
	}
	loose, err := s.Storage.IterEncodedObjects(t)
	if err != nil {
		return nil, err
	}
	return storer.NewMultiEncodedObjectIter(append(iters, loose)), nil
}

// HashesWithPrefix resolves a short commit id from the packs' indexes;
// without it go-git would inflate every object to find it.
func (s *gitStore) HashesWithPrefix(prefix []byte) ([]plumbing.Hash, error) {
	var found []plumbing.Hash
	for _, p := range s.packs {
		entries, err := p.Entries()
		if err != nil {
			return nil, err
		}
		for {
			e, err := entries.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				entries.Close()
				return nil, err
			}
			if bytes.HasPrefix(e.Hash[:], prefix) {
				found = append(found, e.Hash)
			}
		}
		entries.Close()
	}
	for h := range s.Storage.Objects {
		if bytes.HasPrefix(h[:], prefix) {
			found = append(found, h)
		}
	}
	return found, nil
}

// packWriter receives one packfile, counting it against the store's limit,
// and adds it to the store once it is complete and indexed. A packfile cut
// short (the limit, a network error) is dropped.
type packWriter struct {
	store  *gitStore
	buf    packBuffer
	failed bool
}

func (w *packWriter) Write(p []byte) (int, error) {
	if w.store.received+int64(len(p)) > w.store.limit {
		w.failed = true
		return 0, errFetchLimit
	}
	w.store.received += int64(len(p))
	w.buf.write(p)
	return len(p), nil
}

func (w *packWriter) Close() error {
	if w.failed || w.buf.size == 0 {
		return nil
	}
	if err := checkObjectSizes(w.buf.reader(), w.store.limit); err != nil {
		return err
	}
	index := new(idxfile.Writer)
	parser, err := packfile.NewParser(packfile.NewScanner(w.buf.reader()), index)
	if err != nil {
		return fmt.Errorf("index fetched packfile: %w", err)
	}
	if _, err := parser.Parse(); err != nil {
		return fmt.Errorf("index fetched packfile: %w", err)
	}
	idx, err := index.Index()
	if err != nil {
		return fmt.Errorf("index fetched packfile: %w", err)
	}
	w.store.packs = append(w.store.packs, packfile.NewPackfileWithCache(idx, nil, w.buf.reader(), w.store.cache, 0))
	return nil
}

// objectTooLargeError is an object whose declared inflated size is over the
// limit. go-git's indexer inflates every object once and sets its buffer
// aside up front from that size, so a few bytes of packfile could otherwise
// take gigabytes.
type objectTooLargeError struct{ size, limit int64 }

func (e *objectTooLargeError) Error() string {
	return fmt.Sprintf("an object in the packfile inflates to %d bytes, over the limit of %d", e.size, e.limit)
}

// checkObjectSizes reads every object header of a packfile (go-git's scanner
// holds each object to the size its header declares) and refuses an object
// that would inflate past limit, inflating nothing into memory itself.
func checkObjectSizes(r io.Reader, limit int64) error {
	s := packfile.NewScanner(r)
	_, count, err := s.Header()
	if err != nil {
		return fmt.Errorf("read fetched packfile: %w", err)
	}
	for range count {
		h, err := s.NextObjectHeader()
		if err != nil {
			return fmt.Errorf("read fetched packfile: %w", err)
		}
		size := h.Length
		if h.Type.IsDelta() {
			var head deltaHead
			if _, _, err := s.NextObject(&head); err != nil {
				return fmt.Errorf("read fetched packfile: %w", err)
			}
			if size, err = head.targetSize(); err != nil {
				return fmt.Errorf("read fetched packfile: %w", err)
			}
		}
		if size > limit {
			return &objectTooLargeError{size: size, limit: limit}
		}
	}
	return nil
}

// deltaHead keeps the start of a delta: two LEB128 numbers, the size of the
// base and the size of the object the delta makes.
type deltaHead struct{ b []byte }

func (d *deltaHead) Write(p []byte) (int, error) {
	if room := 2*binary.MaxVarintLen64 - len(d.b); room > 0 {
		d.b = append(d.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (d *deltaHead) targetSize() (int64, error) {
	_, n := binary.Uvarint(d.b)
	if n <= 0 {
		return 0, errors.New("malformed delta header")
	}
	size, m := binary.Uvarint(d.b[n:])
	if m <= 0 || size > math.MaxInt64 {
		return 0, errors.New("malformed delta header")
	}
	return int64(size), nil
}
