package fetch

import (
	"errors"
	"io"
)

// packChunk is the unit a packBuffer grows by: small enough that a short
// fetch wastes little, large enough that a long one needs few chunks.
const packChunk = 256 << 10

// packBuffer holds a packfile in memory in fixed-size chunks, so that
// growing it never copies what it already holds (a single slice would be
// copied at every growth and briefly held twice).
type packBuffer struct {
	chunks [][]byte
	size   int64
}

func (b *packBuffer) write(p []byte) {
	for len(p) > 0 {
		if len(b.chunks) == 0 || len(b.chunks[len(b.chunks)-1]) == packChunk {
			b.chunks = append(b.chunks, make([]byte, 0, packChunk))
		}
		last := &b.chunks[len(b.chunks)-1]
		n := min(len(p), packChunk-len(*last))
		*last = append(*last, p[:n]...)
		b.size += int64(len(p[:n]))
		p = p[n:]
	}
}

// reader is a read-only file over the buffer, as go-git's packfile reader
// wants it (a billy.File); each has its own position.
func (b *packBuffer) reader() *packReader { return &packReader{buf: b} }

type packReader struct {
	buf *packBuffer
	pos int64
}

var errReadOnly = errors.New("packfile in memory is read-only")

func (r *packReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	n := 0
	for n < len(p) && off < r.buf.size {
		chunk := r.buf.chunks[off/packChunk]
		c := copy(p[n:], chunk[off%packChunk:])
		n += c
		off += int64(c)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (r *packReader) Read(p []byte) (int, error) {
	if r.pos >= r.buf.size {
		return 0, io.EOF
	}
	n, err := r.ReadAt(p, r.pos)
	r.pos += int64(n)
	if errors.Is(err, io.EOF) && n > 0 {
		err = nil
	}
	return n, err
}

func (r *packReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.pos
	case io.SeekEnd:
		offset += r.buf.size
	default:
		return 0, errors.New("invalid whence")
	}
	if offset < 0 {
		return 0, errors.New("negative position")
	}
	r.pos = offset
	return offset, nil
}

func (r *packReader) Name() string              { return "fetched.pack" }
func (r *packReader) Close() error              { return nil }
func (r *packReader) Write([]byte) (int, error) { return 0, errReadOnly }
func (r *packReader) Truncate(int64) error      { return errReadOnly }
func (r *packReader) Lock() error               { return nil }
func (r *packReader) Unlock() error             { return nil }
