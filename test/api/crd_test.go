package api_test

import (
	"context"
	"os"
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

func specOf(data []byte) any {
	var crd map[string]any
	ExpectWithOffset(1, yaml.Unmarshal(data, &crd)).To(Succeed())
	return withoutDocs(crd["spec"])
}

var _ = Describe("the generated CRD", func() {
	It("matches rukpak v0.24.0's installed CRD structurally", func(ctx context.Context) {
		ours, err := env.Kustomize(ctx, "config/crd")
		Expect(err).NotTo(HaveOccurred())
		ref, err := os.ReadFile(filepath.Join(env.Root, "..", "shared", "reference", "rukpak-v0.24.0", "crds.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(specOf(ours)).To(Equal(specOf(ref)))
	})
})
