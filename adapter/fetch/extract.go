package fetch

import (
	"io"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch/unpack"
)

// The file tree, its limits and tar extraction are package unpack's; these
// names keep fetch the one package its callers import.
type (
	// Files is a bundle's file tree: slash-separated paths relative to its
	// root. Directories appear as "path/" with no data.
	Files = unpack.Files
	// Limits bound what one bundle may unpack to.
	Limits = unpack.Limits
)

// DefaultLimits fit any real bundle (see unpack.DefaultLimits).
var DefaultLimits = unpack.DefaultLimits

// ErrInvalidContent marks content that can never be unpacked: retrying
// cannot help until the source changes.
var ErrInvalidContent = unpack.ErrInvalidContent

// ExtractTar reads a tar stream into memory with unpack's checks: nothing
// outside the root, no link out of it, nothing over the limits.
func ExtractTar(r io.Reader, limits Limits) (Files, error) {
	return unpack.ExtractTar(r, limits)
}
