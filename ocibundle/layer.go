package ocibundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// File is one entry of a layer: a directory when Dir is set.
type File struct {
	Data []byte
	Mode int64
	Dir  bool
	UID  int
}

// Layer tars files (sorted, with their parent directories, owned by root
// unless said otherwise, every time set to mtime) into a gzipped OCI layer:
// the same files always give the same digest.
func Layer(files map[string]File, mtime time.Time) (v1.Layer, error) {
	all := map[string]File{}
	for name, f := range files {
		name = strings.Trim(name, "/")
		all[name] = f
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			if _, ok := all[dir]; !ok {
				all[dir] = File{Dir: true, Mode: 0o755}
			}
		}
	}
	names := make([]string, 0, len(all))
	for name := range all {
		names = append(names, name)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range names {
		f := all[name]
		hdr := &tar.Header{Name: name, Mode: f.Mode, ModTime: mtime, Uid: f.UID, Gid: f.UID, Format: tar.FormatPAX}
		if f.Dir {
			hdr.Typeflag, hdr.Name = tar.TypeDir, name+"/"
		} else {
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(f.Data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithCompressionLevel(gzip.BestCompression), tarball.WithMediaType(types.OCILayer))
}
