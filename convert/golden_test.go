package convert

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/rukpak-kapp/rukpak-kapp/convert/certs"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden (go test ./convert -run Golden -update)")

const (
	goldenDir = "testdata/golden"
	// maxGolden keeps each golden file reviewable.
	maxGolden = 1 << 20
	// summariseOver is the length above which a string value is shown as
	// its hash: CSV descriptions and alm-examples copied onto pod
	// templates, large ConfigMap data.
	summariseOver = 2048
)

// goldenBundles are every corpus bundle and rukpak's valid registry
// bundle, by the golden file name of each.
func goldenBundles(t *testing.T) map[string]string {
	t.Helper()
	root := filepath.Join("..", "test", "testdata")
	dirs, err := filepath.Glob(filepath.Join(root, "registry-v1-corpus", "*", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("the registry+v1 corpus is missing from test/testdata: %v", err)
	}
	out := map[string]string{"rukpak-registry-valid.yaml": filepath.Join(root, "rukpak-bundles", "registry", "valid")}
	for _, d := range dirs {
		if info, err := os.Stat(d); err == nil && info.IsDir() {
			out[filepath.Base(filepath.Dir(d))+"-"+filepath.Base(d)+".yaml"] = d
		}
	}
	return out
}

// TestGolden converts every bundle of the test data and compares the
// result, or the refusal, with its golden file, so that any change of
// output is a reviewed diff. Certificates are fixed placeholders; CRD
// schemas and long strings are summarised by hash (see golden README).
func TestGolden(t *testing.T) {
	t.Parallel()
	bundles := goldenBundles(t)
	if *update {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, dir := range bundles {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := renderGolden(t, dir)
			if len(got) > maxGolden {
				t.Errorf("golden output is %d bytes, over %d: summarise more", len(got), maxGolden)
			}
			path := filepath.Join(goldenDir, name)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (create it with -update)", err)
			}
			if !bytes.Equal(want, got) {
				t.Errorf("output differs from %s (review the change, then regenerate with go test ./convert -run Golden -update); first difference at %s", path, firstDifference(want, got))
			}
		})
	}
	entries, err := os.ReadDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := bundles[e.Name()]; !ok && strings.HasSuffix(e.Name(), ".yaml") {
			t.Errorf("%s/%s has no bundle any more: remove it", goldenDir, e.Name())
		}
	}
}

func renderGolden(t *testing.T, dir string) []byte {
	t.Helper()
	files, err := ReadDir(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	source := filepath.ToSlash(strings.TrimPrefix(dir, filepath.Join("..", "test", "testdata")+string(filepath.Separator)))
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# convert of test/testdata/%s: install namespace op-ns, the bundle's default watch namespaces.\n", source)
	buf.WriteString("# Regenerate with: go test ./convert -run Golden -update\n")
	summary := map[string]any{}
	if m, err := ReadMetadata(files); err == nil {
		summary["metadata"] = m
	} else {
		summary["unreadable"] = err.Error()
	}
	r, err := Convert(files, Options{InstallNamespace: "op-ns", Certificates: goldenCerts})
	var objs []*unstructured.Unstructured
	switch {
	case err == nil:
		objs = r.Objects
		if len(r.Notes) > 0 {
			summary["notes"] = r.Notes
		}
	case asError(err, new(*Error)):
		var cerr *Error
		asError(err, &cerr)
		summary["refused"] = cerr.Problems
	default:
		summary["refused"] = []string{err.Error()}
	}
	writeYAML(t, &buf, summary)
	for _, o := range objs {
		buf.WriteString("---\n")
		writeYAML(t, &buf, summarise(o.Object, o.GetKind() == "CustomResourceDefinition", nil))
	}
	return buf.Bytes()
}

func writeYAML(t *testing.T, buf *bytes.Buffer, v any) {
	t.Helper()
	// Through JSON, so that structs render with their JSON names.
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := yaml.JSONToYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	buf.Write(out)
}

// summarise replaces the bulky parts a reviewer cannot read anyway by a
// hash: a CRD version's schema, and strings over summariseOver.
func summarise(v any, crd bool, path []string) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range t {
			p := append(append([]string(nil), path...), k)
			if crd && k == "openAPIV3Schema" && len(path) == 4 && path[0] == "spec" && path[1] == "versions" {
				out[k] = hashOf(val)
				continue
			}
			out[k] = summarise(val, crd, p)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = summarise(val, crd, append(append([]string(nil), path...), fmt.Sprint(i)))
		}
		return out
	case string:
		if len(t) > summariseOver {
			return hashOf(t)
		}
	}
	return v
}

func hashOf(v any) string {
	data, _ := json.Marshal(v)
	sum := sha256.Sum256(data)
	return fmt.Sprintf("sha256:%s (%d bytes of JSON)", hex.EncodeToString(sum[:8]), len(data))
}

// goldenCerts are fixed placeholders: the converter copies certificates,
// it does not read them.
func goldenCerts(service, namespace string) (ServingCert, error) {
	pem := func(what string) []byte {
		return []byte(fmt.Sprintf("-----BEGIN %s-----\ngolden placeholder for %s/%s\n-----END %s-----\n", what, namespace, service, what))
	}
	return ServingCert{
		Serving:  certs.Pair{CertPEM: pem("CERTIFICATE"), KeyPEM: pem("EC PRIVATE KEY")},
		CABundle: []byte("-----BEGIN CERTIFICATE-----\ngolden placeholder CA\n-----END CERTIFICATE-----\n"),
	}, nil
}

// firstDifference names the first line where two renderings differ.
func firstDifference(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(w) && i < len(g); i++ {
		if w[i] != g[i] {
			return fmt.Sprintf("line %d:\n-%s\n+%s", i+1, w[i], g[i])
		}
	}
	return fmt.Sprintf("line %d (one is longer)", min(len(w), len(g))+1)
}
