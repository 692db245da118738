package bundlefiles

import (
	"bytes"
	"errors"
	"io"
	"regexp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// ChartCRDsDir holds a chart's crds/ CRDs (and its unpacked subcharts'),
// taken out of the chart so that helm does not render them with the
// release: Helm installs them when they are absent and never upgrades or
// deletes them, and they belong to no release, so two releases of one
// chart share them. Each is marked (AnnotationChartCRD) for the App's
// template to tell kapp that it exists, so kapp waits for it before the
// chart's own objects and never creates, updates, claims or deletes it;
// the adapter creates the ones that are absent (package chartcrds). A
// Package made of the content leaves the mark unused: there kapp applies
// them as it applies everything else.
const ChartCRDsDir = "rukpak-kapp-chart-crds"

// AnnotationChartCRD marks a CRD of a chart's crds/.
const AnnotationChartCRD = "core.rukpak.io/chart-crd"

// chartCRDFile matches a file of a chart's crds/ directory or of an
// unpacked subchart's, as Helm reads them.
var chartCRDFile = regexp.MustCompile(`^(charts/[^/]+/)*crds/.+\.(yaml|yml|json)$`)

// chartCRDs moves every file of rest (a path inside the chart) that holds
// only CustomResourceDefinitions into ChartCRDsDir, each marked.
// A file that holds anything else, or does not parse, stays in the chart,
// as it was.
func chartCRDs(rest string, data []byte) (string, []byte, bool) {
	if !chartCRDFile.MatchString(rest) {
		return "", nil, false
	}
	objs, err := Objects(data)
	if err != nil || len(objs) == 0 {
		return "", nil, false
	}
	var out bytes.Buffer
	for _, u := range objs {
		if u.GetAPIVersion() != "apiextensions.k8s.io/v1" || u.GetKind() != "CustomResourceDefinition" {
			return "", nil, false
		}
		annotations := u.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[AnnotationChartCRD] = ""
		u.SetAnnotations(annotations)
		doc, err := yaml.Marshal(u.Object)
		if err != nil {
			return "", nil, false
		}
		out.WriteString("---\n")
		out.Write(doc)
	}
	return ChartCRDsDir + "/" + rest, out.Bytes(), true
}

// Objects are the objects of a YAML (or JSON) stream, empty documents left
// out.
func Objects(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}
