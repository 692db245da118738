package bundlefiles

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

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

// CheckPlainObjects reads the files a plain bundle installs (PlainFiles'
// output) as YAML or JSON documents, as rukpak did when it unpacked one:
// every document that is not empty is an object with an apiVersion and a
// kind, and there is at least one. kapp finds the same when it installs a
// BundleDeployment; a Bundle on its own is never installed, so its unpack
// checks. Files are read in path order, so the first problem named is
// always the same.
func CheckPlainObjects(files map[string][]byte) error {
	objects := 0
	for _, p := range slices.Sorted(maps.Keys(files)) {
		d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(files[p]), 4096)
		for i := 1; ; i++ {
			var obj map[string]any
			err := d.Decode(&obj)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return invalid(fmt.Sprintf("get objects from bundle manifests: %s: %v", p, err))
			}
			if len(obj) == 0 {
				continue
			}
			u := unstructured.Unstructured{Object: obj}
			if u.GetAPIVersion() == "" || u.GetKind() == "" {
				return invalid(fmt.Sprintf("get objects from bundle manifests: %s: document %d is not an object: it has no apiVersion or no kind", p, i))
			}
			objects++
		}
	}
	if objects == 0 {
		return invalid(ZeroObjects)
	}
	return nil
}
