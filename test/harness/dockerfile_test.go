package harness

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
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
