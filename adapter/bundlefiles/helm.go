package bundlefiles

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// ChartDir and ValuesFile are where the content Secrets put a helm
// bundle's chart and the values from spec.config.
const (
	ChartDir   = "chart"
	ValuesFile = "rukpak-kapp-values/values.yaml"
)

// HelmFiles lays a fetched helm bundle out for the App: the chart, found
// at the bundle root or in its single top-level directory as rukpak looked
// for it, moves under ChartDir, and the BD's values go alongside it. The
// chart's crds/ go to ChartCRDsDir.
func HelmFiles(bd *rukpakv1alpha2.BundleDeployment, files map[string][]byte) (map[string][]byte, error) {
	values, err := HelmValues(bd)
	if err != nil {
		return nil, err
	}
	root := ChartRoot(files)
	if _, ok := files[root+"Chart.yaml"]; !ok {
		return nil, invalid(fmt.Sprintf("Chart.yaml file is missing: a helm bundle holds a chart at its root or in its single top-level directory, and this one has %s", describeTop(files)))
	}
	out := map[string][]byte{ValuesFile: values}
	for p, data := range files {
		rest, ok := strings.CutPrefix(p, root)
		if !ok || rest == "" || strings.HasSuffix(rest, "/") {
			continue
		}
		if moved, marked, ok := chartCRDs(rest, data); ok {
			out[moved] = marked
			continue
		}
		out[ChartDir+"/"+rest] = data
	}
	return out, nil
}

// ChartRoot is "" when the chart sits at the root, else "<dir>/" when the
// root holds exactly one entry and it is a directory.
func ChartRoot(files map[string][]byte) string {
	top := topLevel(files)
	if len(top) == 1 && strings.HasSuffix(top[0], "/") {
		return top[0]
	}
	return ""
}

func topLevel(files map[string][]byte) []string {
	seen := map[string]bool{}
	for p := range files {
		if i := strings.Index(p, "/"); i >= 0 {
			seen[p[:i+1]] = true
		} else {
			seen[p] = true
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func describeTop(files map[string][]byte) string {
	top := topLevel(files)
	switch {
	case len(top) == 0:
		return "no files"
	case len(top) > 5:
		return fmt.Sprintf("%d top-level entries (%s, ...)", len(top), strings.Join(top[:5], ", "))
	default:
		return "top-level entries " + strings.Join(top, ", ")
	}
}

// HelmValues reads spec.config as rukpak did: string entries, of which
// "values" is a YAML document of chart values.
func HelmValues(bd *rukpakv1alpha2.BundleDeployment) ([]byte, error) {
	if bd.Spec.Config == nil || len(bd.Spec.Config.Raw) == 0 {
		return []byte("{}\n"), nil
	}
	var cfg map[string]any
	if err := json.Unmarshal(bd.Spec.Config.Raw, &cfg); err != nil {
		return nil, invalid(fmt.Sprintf("parse deployment config: %v", err))
	}
	for k, v := range cfg {
		if _, ok := v.(string); !ok {
			return nil, invalid(fmt.Sprintf("parse deployment config: spec.config.%s must be a string, for helm bundles spec.config.values holds the chart values as one YAML string", k))
		}
	}
	raw, _ := cfg["values"].(string)
	var values map[string]any
	if err := yaml.Unmarshal([]byte(raw), &values); err != nil {
		return nil, invalid(fmt.Sprintf("parse deployment config: spec.config.values is not a YAML map of chart values: %v", err))
	}
	if values == nil {
		values = map[string]any{}
	}
	out, err := yaml.Marshal(values)
	if err != nil {
		return nil, invalid(fmt.Sprintf("parse deployment config: %v", err))
	}
	return out, nil
}
