package contenturl

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"
)

// writeTarGz writes files (paths relative to the bundle root; a path
// ending in / is a directory) as a gzipped tarball. The bytes depend on
// the files only: entries sorted, every parent directory listed once,
// no times, owners or modes of the machine that made it.
func writeTarGz(w io.Writer, files map[string][]byte) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	dirs := map[string]bool{}
	var names []string
	for p := range files {
		if strings.HasSuffix(p, "/") {
			dirs[strings.TrimSuffix(p, "/")] = true
			continue
		}
		names = append(names, p)
		for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for d := range dirs {
		names = append(names, d+"/")
	}
	slices.Sort(names)
	epoch := time.Unix(0, 0).UTC()
	for _, name := range names {
		hdr := &tar.Header{Name: name, ModTime: epoch, Format: tar.FormatPAX}
		if strings.HasSuffix(name, "/") {
			hdr.Typeflag, hdr.Mode = tar.TypeDir, 0o755
		} else {
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, int64(len(files[name]))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write(files[name]); err != nil {
				return fmt.Errorf("write %s: %w", name, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}
