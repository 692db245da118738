package fetch

import (
	"errors"
	"io"

	"github.com/go-git/go-billy/v5/memfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// errFetchLimit stops a git fetch at Limits.MaxFetchBytes; FetchGit turns
// it into a message that says what to do.
var errFetchLimit = errors.New("git fetch over its byte limit")

// objectCacheBytes bounds the decoded objects kept while the tree is read;
// a blob is read once, so the cache only spares re-reading delta bases.
const objectCacheBytes = 16 * cache.MiByte

// gitStore keeps a fetched repository in memory as the packfiles the server
// sent, compressed and read on demand, rather than as inflated objects (an
// object history held inflated takes many times its packed size). It counts
// the packfile bytes received across every fetch into it, and a fetch that
// would pass the limit fails with errFetchLimit.
type gitStore struct {
	*filesystem.Storage
	limit, received int64
}

func newGitStore(limit int64) *gitStore {
	return &gitStore{Storage: filesystem.NewStorage(memfs.New(), cache.NewObjectLRU(objectCacheBytes)), limit: limit}
}

// PackfileWriter is what go-git writes a fetched packfile to when the
// storage offers it, so every byte of a fetch passes through here.
func (s *gitStore) PackfileWriter() (io.WriteCloser, error) {
	w, err := s.Storage.PackfileWriter()
	if err != nil {
		return nil, err
	}
	return &cappedPackWriter{WriteCloser: w, store: s}, nil
}

type cappedPackWriter struct {
	io.WriteCloser
	store *gitStore
}

func (w *cappedPackWriter) Write(p []byte) (int, error) {
	if w.store.received+int64(len(p)) > w.store.limit {
		return 0, errFetchLimit
	}
	w.store.received += int64(len(p))
	return w.WriteCloser.Write(p)
}
