package contenturl

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// untar lists a tarball's entries with their contents ("" for directories).
func untar(t *testing.T, r io.Reader) map[string]string {
	t.Helper()
	gz, err := gzip.NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]string{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[hdr.Name] = string(data)
	}
}

func TestWriteTarGz_TheFilesAloneMakeTheBytes(t *testing.T) {
	files := map[string][]byte{"manifests/a.yaml": []byte("a: 1\n"), "manifests/sub/b.yaml": []byte("b: 2\n"), "empty/": nil, "README": []byte("hi")}
	var one, two bytes.Buffer
	if err := writeTarGz(&one, files); err != nil {
		t.Fatal(err)
	}
	copied := map[string][]byte{}
	for k, v := range files {
		copied[k] = v
	}
	if err := writeTarGz(&two, copied); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one.Bytes(), two.Bytes()) {
		t.Fatal("the same files made different tarballs")
	}
	got := untar(t, bytes.NewReader(one.Bytes()))
	want := map[string]string{"README": "hi", "empty/": "", "manifests/": "", "manifests/a.yaml": "a: 1\n", "manifests/sub/": "", "manifests/sub/b.yaml": "b: 2\n"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
}

func key(uid, version string) Key { return Key{UID: types.UID(uid), Version: version} }

// blob is a file of n random-looking bytes, which gzip cannot shrink much.
func blob(n int, seed byte) map[string][]byte {
	data := make([]byte, n)
	x := uint32(seed) + 1
	for i := range data {
		x = x*1664525 + 1013904223
		data[i] = byte(x >> 24)
	}
	return map[string][]byte{"manifests/blob": data}
}

func newStore(t *testing.T, max int64) (*Tarballs, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "content")
	s, err := NewTarballs(dir, max)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func TestStore_PutOpenReplaceForget(t *testing.T) {
	s, dir := newStore(t, 1<<20)
	files := map[string][]byte{"manifests/a.yaml": []byte("kind: A\n")}
	if _, err := s.Put(key("u1", "v1"), files, true); err != nil {
		t.Fatal(err)
	}
	f, info, err := s.Open(key("u1", "v1"))
	if err != nil || info.Size == 0 {
		t.Fatalf("open: %v %v", info, err)
	}
	if got := untar(t, f); got["manifests/a.yaml"] != "kind: A\n" {
		t.Fatalf("content %v", got)
	}
	_ = f.Close()
	if _, _, err := s.Open(key("u1", "v2")); !errors.Is(err, ErrNotStored) {
		t.Fatalf("another version: %v", err)
	}
	if _, _, err := s.Open(key("u2", "v1")); !errors.Is(err, ErrNotStored) {
		t.Fatalf("another object: %v", err)
	}

	// A new version replaces the old one's file.
	if _, err := s.Put(key("u1", "v2"), map[string][]byte{"manifests/b.yaml": []byte("kind: B\n")}, true); err != nil {
		t.Fatal(err)
	}
	if stored, _ := s.Has(key("u1", "v1")); stored {
		t.Fatal("the old version is still stored")
	}
	if names := listDir(t, dir); len(names) != 1 || !strings.HasPrefix(names[0], "u1-v2") {
		t.Fatalf("files %v", names)
	}

	// A reader keeps what it opened when the object goes.
	f, _, err = s.Open(key("u1", "v2"))
	if err != nil {
		t.Fatal(err)
	}
	s.Forget("u1")
	if got := untar(t, f); got["manifests/b.yaml"] != "kind: B\n" {
		t.Fatalf("content after forget %v", got)
	}
	_ = f.Close()
	if n, objects := s.Used(); n != 0 || objects != 0 || len(listDir(t, dir)) != 0 {
		t.Fatalf("after forget: %d bytes, %d objects, files %v", n, objects, listDir(t, dir))
	}
}

func TestStore_StartsEmpty(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "content")
	s, err := NewTarballs(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(key("u1", "v1"), blob(100, 1), true); err != nil {
		t.Fatal(err)
	}
	// A new process (a restart) does not trust what it finds.
	if _, err := NewTarballs(dir, 1<<20); err != nil {
		t.Fatal(err)
	}
	if names := listDir(t, dir); len(names) != 0 {
		t.Fatalf("left from before: %v", names)
	}
}

func TestStore_DropsWhatMayBeDroppedToMakeRoom(t *testing.T) {
	// Each tarball takes a little over 10 KiB.
	s, _ := newStore(t, 35<<10)
	put := func(uid string, pinned bool) error {
		_, err := s.Put(key(uid, "v"), blob(10<<10, uid[0]), pinned)
		return err
	}
	has := func(uid string) bool {
		stored, _ := s.Has(key(uid, "v"))
		return stored
	}
	for _, uid := range []string{"pinned", "a", "b"} {
		if err := put(uid, uid == "pinned"); err != nil {
			t.Fatal(err)
		}
	}
	// "a" was served after "b" was stored: "b" is the least recently used.
	f, _, err := s.Open(key("a", "v"))
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if err := put("c", false); err != nil {
		t.Fatal(err)
	}
	if !has("pinned") || !has("a") || has("b") || !has("c") {
		t.Fatalf("after c: pinned %v, a %v, b %v, c %v", has("pinned"), has("a"), has("b"), has("c"))
	}

	// Pinned content takes the place of what may be dropped...
	if err := put("pinned2", true); err != nil {
		t.Fatal(err)
	}
	if err := put("pinned3", true); err != nil {
		t.Fatal(err)
	}
	if has("a") || has("c") {
		t.Fatal("content a request fetched stayed while pinned content needed its room")
	}
	// ...but content that cannot fit alongside the pinned is refused, and
	// nothing is dropped for it.
	err = put("d", false)
	if !errors.Is(err, ErrFull) || !strings.Contains(err.Error(), "--content-max-bytes") {
		t.Fatalf("one more alongside three pinned: %v", err)
	}
	if !has("pinned") || !has("pinned2") || !has("pinned3") || has("d") {
		t.Fatal("a refused put changed what is stored")
	}
	if n, objects := s.Used(); objects != 3 || n > 35<<10 {
		t.Fatalf("used %d bytes by %d objects", n, objects)
	}
}

func TestStore_PinsWhatARequestFetched(t *testing.T) {
	s, _ := newStore(t, 1<<20)
	if _, err := s.Put(key("u", "v"), blob(10, 1), false); err != nil {
		t.Fatal(err)
	}
	if _, pinned := s.Has(key("u", "v")); pinned {
		t.Fatal("pinned too early")
	}
	if _, err := s.Put(key("u", "v"), blob(10, 1), true); err != nil {
		t.Fatal(err)
	}
	if stored, pinned := s.Has(key("u", "v")); !stored || !pinned {
		t.Fatal("the unpack did not pin it")
	}
}

func TestStore_ConcurrentPuts(t *testing.T) {
	s, dir := newStore(t, 64<<10)
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			uid := fmt.Sprintf("u%d", i%8)
			_, _ = s.Put(key(uid, fmt.Sprint(i%3)), blob(4<<10, byte(i)), i%2 == 0)
			if f, _, err := s.Open(key(uid, fmt.Sprint(i%3))); err == nil {
				_ = f.Close()
			}
		}()
	}
	wg.Wait()
	n, objects := s.Used()
	if names := listDir(t, dir); len(names) != objects || n > 64<<10 {
		t.Fatalf("%d bytes, %d objects, files %v", n, objects, names)
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
