package bundlefiles

import "strings"

// ManifestsDir is where a plain bundle keeps its objects.
const ManifestsDir = "manifests"

// PlainFiles keeps the files a plain bundle installs: those under manifests/.
// A bundle without them is invalid, in rukpak's words.
func PlainFiles(files map[string][]byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	sawDir := false
	for p, data := range files {
		if rest, ok := strings.CutPrefix(p, ManifestsDir+"/"); ok {
			sawDir = true
			if rest != "" && !strings.HasSuffix(rest, "/") {
				out[p] = data
			}
		}
	}
	if !sawDir {
		return nil, invalid("readdir manifests: file does not exist: the bundle has no manifests/ directory")
	}
	if len(out) == 0 {
		return nil, invalid(ZeroObjects)
	}
	return out, nil
}

// ZeroObjects is rukpak's message for a plain bundle without objects.
const ZeroObjects = "found zero objects: plain+v0 bundles are required to contain at least one object"
