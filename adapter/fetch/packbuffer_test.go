package fetch

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

func TestPackBuffer(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewChaCha8([32]byte{1}))
	data := make([]byte, 3*packChunk+17)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	var b packBuffer
	// Writes of odd sizes, so that some straddle a chunk boundary.
	for rest := data; len(rest) > 0; {
		n := min(len(rest), 1+rng.IntN(100<<10))
		b.write(rest[:n])
		rest = rest[n:]
	}
	if b.size != int64(len(data)) {
		t.Fatalf("size = %d, want %d", b.size, len(data))
	}
	all, err := io.ReadAll(b.reader())
	if err != nil || !bytes.Equal(all, data) {
		t.Fatalf("ReadAll: %d bytes, %v; want the %d bytes written", len(all), err, len(data))
	}
	for _, tt := range []struct {
		off, n int
		eof    bool
	}{
		{off: 0, n: 10},
		{off: packChunk - 5, n: 10},
		{off: packChunk - 1, n: 2*packChunk + 2},
		{off: len(data) - 4, n: 4},
		{off: len(data) - 4, n: 8, eof: true},
		{off: len(data), n: 1, eof: true},
	} {
		p := make([]byte, tt.n)
		n, err := b.reader().ReadAt(p, int64(tt.off))
		want := data[tt.off:min(tt.off+tt.n, len(data))]
		if !bytes.Equal(p[:n], want) || errors.Is(err, io.EOF) != tt.eof {
			t.Errorf("ReadAt(%d bytes at %d) = %d, %v; want %d bytes, EOF %v", tt.n, tt.off, n, err, len(want), tt.eof)
		}
	}
	r := b.reader()
	if pos, err := r.Seek(-3, io.SeekEnd); err != nil || pos != int64(len(data)-3) {
		t.Fatalf("Seek from end = %d, %v", pos, err)
	}
	tail, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(tail, data[len(data)-3:]) {
		t.Errorf("read after Seek = %x, %v; want %x", tail, err, data[len(data)-3:])
	}
}
