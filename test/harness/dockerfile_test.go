package harness

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func TestDockerContextLayer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string
	}{{
		name: "a directory copied to an absolute path, an ignored file left out",
		files: map[string]string{
			"Dockerfile":                    "FROM scratch\nCOPY manifests /manifests\n",
			".dockerignore":                 "manifests/.gitignore\n",
			"manifests/.gitignore":          "!.gitignore\n",
			"manifests/a.yaml":              "a",
			"manifests/sub/b.yaml":          "b",
			"manifests/emptydir/.gitignore": "!.gitignore\n",
			"build-push-e2e-bundle.sh":      "#!/bin/sh\n",
		},
		want: []string{"manifests/", "manifests/a.yaml", "manifests/emptydir/", "manifests/emptydir/.gitignore", "manifests/sub/", "manifests/sub/b.yaml"},
	}, {
		name:  "a file copied to a relative path",
		files: map[string]string{"Dockerfile": "FROM scratch\nCOPY emptyfile emptyfile\n", "emptyfile": ""},
		want:  []string{"emptyfile"},
	}, {
		name:  "an ignored directory's content, kept as an empty directory",
		files: map[string]string{"Dockerfile": "FROM scratch\nCOPY manifests manifests\n", ".dockerignore": "manifests/.gitignore", "manifests/.gitignore": "x"},
		want:  []string{"manifests/"},
	}, {
		name:  "two directories",
		files: map[string]string{"Dockerfile": "FROM scratch\nCOPY manifests /manifests\nCOPY metadata /metadata\n", "manifests/csv.yaml": "c", "metadata/annotations.yaml": "m"},
		want:  []string{"manifests/", "manifests/csv.yaml", "metadata/", "metadata/annotations.yaml"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			data, err := DockerContextLayer(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := layerNames(t, data); !slices.Equal(got, tc.want) {
				t.Errorf("layer holds %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDockerContextLayerRefusesOtherInstructions(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM alpine\nRUN true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := DockerContextLayer(dir); err == nil {
		t.Fatal("a Dockerfile with a base image was accepted")
	}
}

func layerNames(t *testing.T, data []byte) []string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
}

// operator-controller's test catalog: a named Dockerfile that ADDs a
// directory and labels where the catalog is.
func TestPushDockerfile_AddAndLabel(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"test-catalog.Dockerfile":   "FROM scratch\nADD test-catalog /configs\n\n# where the catalog is\nLABEL operators.operatorframework.io.index.configs.v1=/configs\n",
		"test-catalog/catalog.yaml": "schema: olm.package\nname: demo\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := StartRegistry("", "")
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Stop()
	ref, _, err := reg.PushDockerfile(dir, "test-catalog.Dockerfile", "test-catalog:e2e")
	if err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(r)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Config.Labels["operators.operatorframework.io.index.configs.v1"]; got != "/configs" {
		t.Fatalf("labels %v", cfg.Config.Labels)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d, %v", len(layers), err)
	}
	rc, err := layers[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if got := layerNames(t, data); !slices.Equal(got, []string{"configs/", "configs/catalog.yaml"}) {
		t.Fatalf("layer holds %q", got)
	}

	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nADD https://example.com/x.tgz /x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := DockerContextLayer(dir); err == nil || !strings.Contains(err.Error(), "URL or an archive") {
		t.Fatalf("ADD of a URL: %v", err)
	}
}
