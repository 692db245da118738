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
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

const (
	manifestsDir    = "manifests"
	annotationsFile = "metadata/annotations.yaml"
)

// bundle is a parsed registry+v1 bundle.
type bundle struct {
	pkg  string
	meta metadata
	csv  *v1alpha1.ClusterServiceVersion
	// csvProperties are the CSV's olm.properties annotation, read.
	csvProperties []Property
	crds          []*unstructured.Unstructured
	others        []*unstructured.Unstructured
	// problems found while reading, reported with those of the conversion.
	problems problems
	// notes say where the output differs from the bundle as shipped.
	notes []string
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
	var csvObjects []*unstructured.Unstructured
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
				csvObjects = append(csvObjects, o)
				if len(csvObjects) > 1 {
					// Read once when they are the same; refused below if not.
					continue
				}
				csv := &v1alpha1.ClusterServiceVersion{}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, csv); err != nil {
					b.problems.addf("%s: the ClusterServiceVersion does not match its schema: %v", p, err)
					continue
				}
				b.csv = csv
				b.readCSVProperties()
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
	case len(csvs) > 1 && sameObjects(csvObjects):
		// operator-controller's own test bundle ships its CSV twice, the
		// copies differing only in their YAML's indentation; rukpak read
		// both and kept the last.
		b.notes = append(b.notes, fmt.Sprintf("%s hold the same ClusterServiceVersion %s; it is read once", strings.Join(csvs, " and "), csvObjects[0].GetName()))
	case len(csvs) > 1:
		sort.Strings(csvs)
		b.problems.addf("more than one ClusterServiceVersion in %s/ (%v), and they differ: keep one (rukpak used the last, in file name order)", manifestsDir, csvs)
	}
	return b, nil
}

// readMetadata takes the package name from metadata/, read as
// operator-registry reads it.
func (b *bundle) readMetadata(files map[string][]byte) error {
	b.meta = readMetadata(files)
	if b.meta.annotationsFile == "" {
		return fmt.Errorf("convert registry+v1 bundle to plain+v0 bundle: no file in %s/ holds the bundle annotations (%s)", metadataDir, annotationsFile)
	}
	b.pkg = b.meta.annotations[packageKey]
	if b.pkg == "" {
		b.problems.addf("%s has no %s annotation", b.meta.annotationsFile, packageKey)
	}
	for _, s := range b.meta.skipped {
		b.notes = append(b.notes, fmt.Sprintf("%s is not YAML or JSON, so it is ignored, as OLM ignores it", s))
	}
	return nil
}

// readCSVProperties reads the CSV's olm.properties annotation, which OLM
// adds to the bundle's properties; like OLM, a value that is not a
// property list is ignored.
func (b *bundle) readCSVProperties() {
	raw, ok := b.csv.Annotations[csvPropertiesKey]
	if !ok {
		return
	}
	if err := json.Unmarshal([]byte(raw), &b.csvProperties); err != nil {
		b.csvProperties = nil
		b.notes = append(b.notes, fmt.Sprintf("the ClusterServiceVersion's %s annotation is not a list of properties, so it is ignored, as OLM ignores it: %v", csvPropertiesKey, err))
	}
}

// decodeAll reads every YAML or JSON document of a file; a List is
// flattened into its items.
func decodeAll(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		// Decoded again with apimachinery's JSON, whole numbers become
		// int64 like in objects the converter generates, so the two
		// compare equal.
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := utiljson.Unmarshal(raw, &m); err != nil {
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

// sameObjects says every object decodes to the same content as the first.
func sameObjects(objs []*unstructured.Unstructured) bool {
	for _, o := range objs[1:] {
		if !equality.Semantic.DeepEqual(objs[0].Object, o.Object) {
			return false
		}
	}
	return true
}
