package api_test

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/google/go-cmp/cmp"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"
)

// withoutDocs drops what may differ from the reference without changing
// what the API server accepts: descriptions, and our CEL rules (checked by
// the admission specs instead).
func withoutDocs(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range t {
			if k == "description" || k == "x-kubernetes-validations" {
				continue
			}
			out[k] = withoutDocs(val)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = withoutDocs(val)
		}
		return out
	default:
		return v
	}
}

// takeField removes and returns the value at path ("0" indexes a list).
func takeField(v any, path []string) any {
	for i, key := range path {
		switch t := v.(type) {
		case map[string]any:
			if i == len(path)-1 {
				val := t[key]
				delete(t, key)
				return val
			}
			v = t[key]
		case []any:
			idx, err := strconv.Atoi(key)
			ExpectWithOffset(1, err).NotTo(HaveOccurred())
			v = t[idx]
		default:
			Fail(fmt.Sprintf("no field at %v", path[:i+1]))
		}
	}
	return nil
}

func specOf(data []byte) any {
	var crd map[string]any
	ExpectWithOffset(1, yaml.Unmarshal(data, &crd)).To(Succeed())
	return withoutDocs(crd["spec"])
}

var _ = Describe("the generated CRD", func() {
	It("matches rukpak v0.24.0's installed CRD structurally", func(ctx context.Context) {
		ours, err := env.Kustomize(ctx, "config/crd")
		Expect(err).NotTo(HaveOccurred())
		ref, err := os.ReadFile(filepath.Join(env.Root, "test", "testdata", "rukpak-v0.24.0", "crds.yaml"))
		Expect(err).NotTo(HaveOccurred())
		oursSpec := specOf(ours)
		// The CEL path rule needs bounds that rukpak's schema did not have;
		// they are the only intended difference.
		schema := []string{"versions", "0", "schema", "openAPIV3Schema", "properties"}
		for _, root := range [][]string{{"spec", "properties", "source"}, {"status", "properties", "resolvedSource"}} {
			cms := append(append(append([]string{}, schema...), root...), "properties", "configMaps")
			Expect(takeField(oursSpec, append(cms, "maxItems"))).To(BeEquivalentTo(64))
			Expect(takeField(oursSpec, append(cms, "items", "properties", "path", "maxLength"))).To(BeEquivalentTo(256))
		}
		Expect(cmp.Diff(specOf(ref), oursSpec)).To(BeEmpty())
	})
})
