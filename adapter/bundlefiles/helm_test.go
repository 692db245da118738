package bundlefiles

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func helmBD(config string) *rukpakv1alpha2.BundleDeployment {
	b := bd(rukpakv1alpha2.ClassHelm, rukpakv1alpha2.BundleSource{Type: "http", HTTP: &rukpakv1alpha2.HTTPSource{URL: "https://x/c.tgz"}})
	if config != "" {
		b.Spec.Config = &apiextensionsv1.JSON{Raw: []byte(config)}
	}
	return b
}

func TestHelmFiles(t *testing.T) {
	t.Parallel()
	chart := []byte("apiVersion: v2\nname: c\nversion: 0.1.0\n")
	tests := []struct {
		name    string
		config  string
		files   map[string][]byte
		want    map[string]string
		wantErr string
	}{
		{
			name:  "chart at the root",
			files: map[string][]byte{"Chart.yaml": chart, "templates/": nil, "templates/d.yaml": []byte("d")},
			want:  map[string]string{"chart/Chart.yaml": string(chart), "chart/templates/d.yaml": "d", ValuesFile: "{}\n"},
		},
		{
			name:   "chart in the single top-level directory, values from config",
			config: `{"values":"replicaCount: 2\nnameOverride: fromvalues\n"}`,
			files:  map[string][]byte{"hello/": nil, "hello/Chart.yaml": chart, "hello/templates/d.yaml": []byte("d")},
			want:   map[string]string{"chart/Chart.yaml": string(chart), "chart/templates/d.yaml": "d", ValuesFile: "nameOverride: fromvalues\nreplicaCount: 2\n"},
		},
		{
			name:   "empty values",
			config: `{"values":""}`,
			files:  map[string][]byte{"Chart.yaml": chart},
			want:   map[string]string{"chart/Chart.yaml": string(chart), ValuesFile: "{}\n"},
		},
		{
			name:    "two top-level directories is not a chart",
			files:   map[string][]byte{"a/Chart.yaml": chart, "b/x": nil},
			wantErr: "Chart.yaml file is missing: a helm bundle holds a chart at its root or in its single top-level directory, and this one has top-level entries a/, b/",
		},
		{
			name:    "a source archive without a chart",
			files:   map[string][]byte{"repo-main/": nil, "repo-main/README.md": []byte("r")},
			wantErr: "Chart.yaml file is missing",
		},
		{name: "no files", files: map[string][]byte{}, wantErr: "this one has no files"},
		{name: "values not YAML", config: `{"values":"a: [1"}`, files: map[string][]byte{"Chart.yaml": chart}, wantErr: "parse deployment config: spec.config.values is not a YAML map of chart values"},
		{name: "values a list", config: `{"values":"- 1\n"}`, files: map[string][]byte{"Chart.yaml": chart}, wantErr: "spec.config.values is not a YAML map"},
		{name: "config entry not a string", config: `{"values":{"a":1}}`, files: map[string][]byte{"Chart.yaml": chart}, wantErr: "spec.config.values must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := HelmFiles(helmBD(tt.config), tt.files)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				var invalid *InvalidError
				if !errors.As(err, &invalid) {
					t.Errorf("error %T is not an InvalidError, so it would be retried", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("HelmFiles: %v", err)
			}
			gotS := map[string]string{}
			for k, v := range got {
				gotS[k] = string(v)
			}
			if d := cmp.Diff(tt.want, gotS); d != "" {
				t.Errorf("files mismatch (-want +got):\n%s", d)
			}
		})
	}
}

func TestTopLevelSorted(t *testing.T) {
	t.Parallel()
	got := topLevel(map[string][]byte{"b/x": nil, "a": nil, "b/": nil, "c/d/e": nil})
	if !sort.StringsAreSorted(got) || strings.Join(got, ",") != "a,b/,c/" {
		t.Errorf("topLevel = %v", got)
	}
}

// A chart's crds/ leave the chart, marked, so helm does not render them
// with the release; anything else stays.
func TestHelmFiles_ChartCRDs(t *testing.T) {
	t.Parallel()
	crd := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: gs.example.com\nspec:\n  group: example.com\n"
	files := map[string][]byte{
		"hello/Chart.yaml":                 []byte("apiVersion: v2\nname: c\nversion: 0.1.0\n"),
		"hello/crds/greetings.yaml":        []byte(crd + "---\n" + strings.Replace(crd, "gs.example", "hs.example", 1)),
		"hello/crds/notes.txt":             []byte("not yaml"),
		"hello/crds/mixed.yaml":            []byte(crd + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"),
		"hello/charts/sub/crds/sub.yml":    []byte(strings.Replace(crd, "gs.example", "sub.example", 1)),
		"hello/templates/crd-in-templates": []byte(crd),
	}
	got, err := HelmFiles(helmBD(""), files)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := []string{
		"chart/Chart.yaml", "chart/crds/mixed.yaml", "chart/crds/notes.txt", "chart/templates/crd-in-templates",
		ChartCRDsDir + "/charts/sub/crds/sub.yml", ChartCRDsDir + "/crds/greetings.yaml", ValuesFile,
	}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}
	moved := string(got[ChartCRDsDir+"/crds/greetings.yaml"])
	if strings.Count(moved, AnnotationChartCRD+": \"\"") != 2 || !strings.Contains(moved, "name: hs.example.com") {
		t.Errorf("moved file:\n%s", moved)
	}
}
