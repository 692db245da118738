package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
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

// specsOf reads every CRD of a multi-document YAML, by name, without docs.
func specsOf(data []byte) map[string]map[string]any {
	out := map[string]map[string]any{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var crd map[string]any
		if err := dec.Decode(&crd); err != nil {
			break
		}
		if crd == nil {
			continue
		}
		name := crd["metadata"].(map[string]any)["name"].(string)
		out[name] = withoutDocs(crd["spec"]).(map[string]any)
	}
	return out
}

// version takes the named version out of a CRD spec.
func version(spec map[string]any, name string) map[string]any {
	for _, v := range spec["versions"].([]any) {
		if v.(map[string]any)["name"] == name {
			return v.(map[string]any)
		}
	}
	Fail("no version " + name)
	return nil
}

func referenceCRDs(release string) map[string]map[string]any {
	data, err := os.ReadFile(filepath.Join(env.Root, "test", "testdata", "rukpak-"+release, "crds.yaml"))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return specsOf(data)
}

// takeConfigMapBounds removes the bounds the CEL path rules need and rukpak's
// schemas did not have, the only intended difference, from the BundleSource
// at root (a path under a version's openAPIV3Schema.properties).
func takeConfigMapBounds(v map[string]any, root ...string) {
	cms := append(append([]string{"schema", "openAPIV3Schema", "properties"}, root...), "properties", "configMaps")
	ExpectWithOffset(1, takeField(v, append(cms, "maxItems"))).To(BeEquivalentTo(64), "%v", root)
	ExpectWithOffset(1, takeField(v, append(cms, "items", "properties", "path", "maxLength"))).To(BeEquivalentTo(256), "%v", root)
}

// takeNewColumns removes the printer columns rukpak's CRD did not
// have: catalog installs' upgrade notices and the health judged by kstatus
// (shown with -o wide only, so kubectl get's default columns stay
// rukpak's).
func takeNewColumns(v map[string]any) {
	columns, _ := v["additionalPrinterColumns"].([]any)
	kept := []any{}
	want := map[string]string{
		"Upgrade": `.status.conditions[?(.type=="UpgradeAvailable")].reason`,
		"Health":  `.status.conditions[?(.type=="Healthy")].reason`,
	}
	taken := 0
	for _, c := range columns {
		col, _ := c.(map[string]any)
		name, _ := col["name"].(string)
		if path, ours := want[name]; ours {
			ExpectWithOffset(1, col).To(Equal(map[string]any{"name": name, "type": "string", "priority": float64(1), "jsonPath": path}))
			taken++
			continue
		}
		kept = append(kept, c)
	}
	ExpectWithOffset(1, taken).To(Equal(len(want)), "the Upgrade and Health columns")
	v["additionalPrinterColumns"] = kept
}

var _ = Describe("the generated CRDs", Ordered, func() {
	var ours map[string]map[string]any
	BeforeAll(func(ctx context.Context) {
		data, err := env.Kustomize(ctx, "config/crd")
		Expect(err).NotTo(HaveOccurred())
		ours = specsOf(data)
		Expect(ours).To(HaveLen(2))
	})

	It("serve BundleDeployment v1alpha2 as rukpak v0.24.0's installed CRD did, stored", func() {
		ref := referenceCRDs("v0.24.0")["bundledeployments.core.rukpak.io"]
		bd := ours["bundledeployments.core.rukpak.io"]
		v := version(bd, "v1alpha2")
		takeConfigMapBounds(v, "spec", "properties", "source")
		takeConfigMapBounds(v, "status", "properties", "resolvedSource")
		takeNewColumns(v)
		Expect(ref["versions"]).To(HaveLen(1))
		Expect(cmp.Diff(ref["versions"].([]any)[0], v)).To(BeEmpty())
		for _, field := range []string{"group", "names", "scope"} {
			Expect(bd[field]).To(Equal(ref[field]), field)
		}
	})

	It("serve BundleDeployment v1alpha1 as rukpak v0.16.0's installed CRD did, stored as v1alpha2", func() {
		ref := referenceCRDs("v0.16.0")["bundledeployments.core.rukpak.io"]
		bd := ours["bundledeployments.core.rukpak.io"]
		v := version(bd, "v1alpha1")
		takeConfigMapBounds(v, "spec", "properties", "template", "properties", "spec", "properties", "source")
		Expect(takeField(v, []string{"storage"})).To(BeFalse())
		refVersion := ref["versions"].([]any)[0].(map[string]any)
		Expect(takeField(refVersion, []string{"storage"})).To(BeTrue())
		Expect(cmp.Diff(refVersion, v)).To(BeEmpty())
		for _, field := range []string{"group", "names", "scope"} {
			Expect(bd[field]).To(Equal(ref[field]), field)
		}
		Expect(bd["versions"]).To(HaveLen(2))
	})

	It("convert BundleDeployments through the adapter's webhook", func() {
		conversion, err := json.Marshal(ours["bundledeployments.core.rukpak.io"]["conversion"])
		Expect(err).NotTo(HaveOccurred())
		Expect(conversion).To(MatchJSON(`{"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
			"clientConfig": {"service": {"namespace": "rukpak-system", "name": "rukpak-kapp-webhook", "path": "/convert", "port": 443}}}}`))
	})

	It("serve Bundle v1alpha1 as rukpak v0.16.0's installed CRD did", func() {
		ref := referenceCRDs("v0.16.0")["bundles.core.rukpak.io"]
		bundle := ours["bundles.core.rukpak.io"]
		v := version(bundle, "v1alpha1")
		takeConfigMapBounds(v, "spec", "properties", "source")
		takeConfigMapBounds(v, "status", "properties", "resolvedSource")
		Expect(cmp.Diff(ref, bundle)).To(BeEmpty())
	})
})
