package content

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// MaxSecretBytes keeps each Secret well under etcd's 1.5 MiB object limit
// once base64 and metadata are added.
const MaxSecretBytes = 700 << 10

// Chunk is one Secret's worth of files from a single directory: Secret keys
// cannot hold '/', so each directory gets its own Secrets.
type Chunk struct {
	// Name is derived from the BundleDeployment and the chunk's content, so
	// the same content keeps the same name and new content gets a new one.
	Name string
	// Dir is the directory, relative to the bundle root, the files go to.
	Dir  string
	Data map[string][]byte
}

// ErrUnstorable says a bundle's files cannot be kept in Secrets: a name a
// Secret key cannot hold, or a file too large. Only new content fixes it.
var ErrUnstorable = errors.New("bundle files cannot be stored")

var validKey = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

// Pack splits files into chunks, deterministically ordered.
func Pack(bdName string, files map[string][]byte) ([]Chunk, error) {
	byDir := map[string][]string{}
	for p := range files {
		if strings.HasSuffix(p, "/") {
			continue
		}
		dir, base := path.Split(p)
		if !validKey.MatchString(base) {
			return nil, fmt.Errorf("%w: file name %q: use letters, digits, '-', '_' and '.'", ErrUnstorable, p)
		}
		if len(files[p]) > MaxSecretBytes {
			return nil, fmt.Errorf("%w: file %q is %d bytes; a single file may be at most %d bytes", ErrUnstorable, p, len(files[p]), MaxSecretBytes)
		}
		byDir[path.Clean(dir)] = append(byDir[path.Clean(dir)], p)
	}
	dirs := make([]string, 0, len(byDir))
	for d := range byDir {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	var chunks []Chunk
	for _, dir := range dirs {
		paths := byDir[dir]
		sort.Strings(paths)
		cur := Chunk{Dir: dir, Data: map[string][]byte{}}
		size := 0
		for _, p := range paths {
			if size+len(files[p]) > MaxSecretBytes && len(cur.Data) > 0 {
				chunks = append(chunks, cur)
				cur, size = Chunk{Dir: dir, Data: map[string][]byte{}}, 0
			}
			cur.Data[path.Base(p)] = files[p]
			size += len(files[p])
		}
		chunks = append(chunks, cur)
	}
	for i := range chunks {
		chunks[i].Name = fmt.Sprintf("%s-content-%s", bdName, digest(chunks[i]))
	}
	return chunks, nil
}

func digest(c Chunk) string {
	h := sha256.New()
	keys := make([]string, 0, len(c.Data))
	for k := range c.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(h, "dir=%s\n", c.Dir)
	for _, k := range keys {
		fmt.Fprintf(h, "%s=%d\n", k, len(c.Data[k]))
		h.Write(c.Data[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:10]
}
