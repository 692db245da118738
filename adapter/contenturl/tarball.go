package contenturl

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rukpak-kapp/rukpak-kapp/ocibundle"
)

// writeTarGz writes files (paths relative to the bundle root; a path
// ending in / is a directory) as a gzipped tarball: ocibundle's layer, whose
// bytes depend on the files only (entries sorted, parents listed, owned by
// root, every time the epoch).
func writeTarGz(w io.Writer, files map[string][]byte) error {
	entries := make(map[string]ocibundle.File, len(files))
	for p, data := range files {
		if dir, ok := strings.CutSuffix(p, "/"); ok {
			entries[dir] = ocibundle.File{Dir: true, Mode: 0o755}
			continue
		}
		entries[p] = ocibundle.File{Data: data, Mode: 0o644}
	}
	layer, err := ocibundle.Layer(entries, time.Unix(0, 0).UTC())
	if err != nil {
		return fmt.Errorf("tar the content: %w", err)
	}
	rc, err := layer.Compressed()
	if err != nil {
		return fmt.Errorf("compress the content: %w", err)
	}
	defer func() { _ = rc.Close() }()
	_, err = io.Copy(w, rc)
	return err
}
