package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

const (
	manifestsDir    = "manifests"
	annotationsFile = "metadata/annotations.yaml"
)

// bundle is a parsed registry+v1 bundle.
type bundle struct {
	pkg    string
	csv    *v1alpha1.ClusterServiceVersion
	crds   []*unstructured.Unstructured
	others []*unstructured.Unstructured
	// problems found while reading, reported with those of the conversion.
	problems problems
}

// name identifies the bundle in messages: the CSV name, else the package.
func (b *bundle) name() string {
	if b.csv != nil && b.csv.Name != "" {
		return b.csv.Name
	}
	if b.pkg != "" {
		return b.pkg
	}
	return "(unnamed)"
}

// parse reads the bundle. Only unreadable input is an error here; what is
// readable but unsupported is collected as problems.
func parse(files map[string][]byte) (*bundle, error) {
	b := &bundle{}
	if err := b.readMetadata(files); err != nil {
		return nil, err
	}
	var names []string
	sawDir := false
	for p := range files {
		rest, ok := strings.CutPrefix(p, manifestsDir+"/")
		if !ok {
			continue
		}
		sawDir = true
		switch {
		case rest == "":
		case strings.Contains(rest, "/"):
			b.problems.addf("subdirectories are not allowed in %s/: found %s", manifestsDir, p[:len(manifestsDir)+1+strings.Index(rest, "/")])
		default:
			names = append(names, p)
		}
	}
	if !sawDir {
		return nil, fmt.Errorf("convert registry+v1 bundle to plain+v0 bundle: the bundle has no %s/ directory", manifestsDir)
	}
	sort.Strings(names)
	b.problems = dedupe(b.problems)
	var csvs []string
	for _, p := range names {
		objs, err := decodeAll(files[p])
		if err != nil {
			b.problems.addf("%s is not valid YAML or JSON: %v", p, err)
			continue
		}
		for _, o := range objs {
			switch {
			case o.GetKind() == "ClusterServiceVersion":
				csvs = append(csvs, p)
				csv := &v1alpha1.ClusterServiceVersion{}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, csv); err != nil {
					b.problems.addf("%s: the ClusterServiceVersion does not match its schema: %v", p, err)
					continue
				}
				b.csv = csv
			case o.GetKind() == "CustomResourceDefinition":
				if o.GetAPIVersion() != "apiextensions.k8s.io/v1" {
					b.problems.addf("CustomResourceDefinition %s uses %s, which Kubernetes no longer serves: convert it to apiextensions.k8s.io/v1", o.GetName(), o.GetAPIVersion())
					continue
				}
				b.crds = append(b.crds, o)
			default:
				b.others = append(b.others, o)
			}
		}
	}
	switch {
	case len(csvs) == 0:
		b.problems.addf("no ClusterServiceVersion in %s/", manifestsDir)
	case len(csvs) > 1:
		sort.Strings(csvs)
		b.problems.addf("more than one ClusterServiceVersion in %s/ (%v)", manifestsDir, csvs)
	}
	return b, nil
}

// readMetadata takes the package name and declared dependencies from
// metadata/, read as operator-registry reads it.
func (b *bundle) readMetadata(files map[string][]byte) error {
	md := readMetadata(files)
	if md.annotationsFile == "" {
		return fmt.Errorf("convert registry+v1 bundle to plain+v0 bundle: no file in %s/ holds the bundle annotations (%s)", metadataDir, annotationsFile)
	}
	b.pkg = md.annotations[packageKey]
	if b.pkg == "" {
		b.problems.addf("%s has no %s annotation", md.annotationsFile, packageKey)
	}
	// Nothing here resolves dependencies, so installing would fail later
	// with a less clear message.
	for _, d := range md.dependencies {
		var v any
		_ = json.Unmarshal(d.Value, &v)
		data, _ := yaml.Marshal(v)
		b.problems.addf("dependencies are not supported: %s %s", d.Type, bytes.TrimSpace(bytes.ReplaceAll(data, []byte("\n"), []byte(" "))))
	}
	return nil
}

// decodeAll reads every YAML or JSON document of a file; a List is
// flattened into its items.
func decodeAll(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				return nil, err
			}
			for i := range list.Items {
				out = append(out, &list.Items[i])
			}
			continue
		}
		out = append(out, u)
	}
}

// ReadDir reads a bundle directory into the file map Objects takes.
// Directories appear as "dir/" keys without data.
func ReadDir(fsys fs.FS) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case p == ".":
		case d.IsDir():
			files[p+"/"] = nil
		case d.Type().IsRegular():
			data, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			files[p] = data
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read bundle: %w", err)
	}
	return files, nil
}
