package unpack

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
)

// Limits bound what one bundle may unpack to.
type Limits struct {
	// MaxFileBytes caps one file.
	MaxFileBytes int64
	// MaxTotalBytes caps all files together.
	MaxTotalBytes int64
	// MaxFiles caps the number of files.
	MaxFiles int
	// MaxFetchBytes caps what one git fetch may receive from the server,
	// history included, which is also about what it holds in memory; no
	// object in it may inflate to more either.
	MaxFetchBytes int64
}

// DefaultLimits fit any real bundle: the largest registry+v1 bundles are a
// few MiB, and an App's content must fit in Secrets anyway. A git fetch
// gets twice the bundle's room for the rest of the repository's files (and
// for history where a commit cannot be fetched alone).
var DefaultLimits = Limits{MaxFileBytes: 8 << 20, MaxTotalBytes: 64 << 20, MaxFiles: 10000, MaxFetchBytes: 128 << 20}

// Admit checks one more file of size bytes against the limits, given the
// bytes and entries taken so far; total grows by size.
func (limits Limits) Admit(name string, size int64, total *int64, entries int) error {
	if size > limits.MaxFileBytes {
		return fmt.Errorf("%w: file %q is %d bytes, over the limit of %d", ErrInvalidContent, name, size, limits.MaxFileBytes)
	}
	if *total += size; *total > limits.MaxTotalBytes {
		return fmt.Errorf("%w: bundle is over the limit of %d bytes", ErrInvalidContent, limits.MaxTotalBytes)
	}
	if entries >= limits.MaxFiles {
		return fmt.Errorf("%w: bundle has more than %d files", ErrInvalidContent, limits.MaxFiles)
	}
	return nil
}

// ErrInvalidContent marks content that can never be unpacked: retrying
// cannot help until the source changes.
var ErrInvalidContent = errors.New("invalid bundle content")

// Files is a bundle's file tree: slash-separated paths relative to its root.
// Directories appear as "path/" with no data.
type Files map[string][]byte

// ExtractTar reads a tar stream into memory. Entries that would land
// outside the root, links pointing outside it, and anything over the limits
// are refused; nothing is ever written to disk.
func ExtractTar(r io.Reader, limits Limits) (Files, error) {
	return readTar(r, limits, true)
}

// CheckTar applies ExtractTar's checks without keeping any file data.
func CheckTar(r io.Reader, limits Limits) error {
	_, err := readTar(r, limits, false)
	return err
}

// readTar walks a tar stream with the checks above; with keep it reads the
// files' data, without it only their names (the reader skips the bodies).
func readTar(r io.Reader, limits Limits, keep bool) (Files, error) {
	files := Files{}
	var total int64
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read archive: %w", err)
		}
		name, err := insideRoot(hdr.Name)
		if err != nil {
			return nil, err
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			// Kept as "dir/" so an empty directory is still visible.
			if name != "." {
				files[name+"/"] = nil
			}
			continue
		case tar.TypeSymlink, tar.TypeLink:
			target := hdr.Linkname
			if hdr.Typeflag == tar.TypeSymlink && !path.IsAbs(target) {
				target = path.Join(path.Dir(name), target)
			}
			if _, err := insideRoot(target); err != nil || path.IsAbs(hdr.Linkname) {
				return nil, fmt.Errorf("%w: link %q points outside the bundle root (%q)", ErrInvalidContent, hdr.Name, hdr.Linkname)
			}
			// Links inside the root are not followed: a bundle is plain files.
			continue
		case tar.TypeReg:
		default:
			continue
		}
		if err := limits.Admit(name, hdr.Size, &total, len(files)); err != nil {
			return nil, err
		}
		if !keep {
			files[name] = nil
			continue
		}
		data, err := io.ReadAll(io.LimitReader(tr, hdr.Size))
		if err != nil {
			return nil, fmt.Errorf("read %q: %w", name, err)
		}
		files[name] = data
	}
}

// insideRoot cleans an archive path and refuses one that climbs out of the
// root. Leading slashes are taken as relative to the root, as image layers
// are rooted at /.
func insideRoot(name string) (string, error) {
	trimmed := strings.TrimLeft(name, "/")
	for _, seg := range strings.Split(trimmed, "/") {
		if seg == ".." {
			return "", fmt.Errorf("%w: archive entry %q escapes the bundle root", ErrInvalidContent, name)
		}
	}
	clean := path.Clean(trimmed)
	if clean == "." || clean == "" {
		return ".", nil
	}
	return clean, nil
}
