package translate

import (
	"testing"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"github.com/google/go-cmp/cmp"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func TestApp_Helm(t *testing.T) {
	t.Parallel()
	helm := bd(rukpakv1alpha2.ClassHelm, rukpakv1alpha2.BundleSource{Type: "http", HTTP: &rukpakv1alpha2.HTTPSource{URL: "https://x/c.tgz"}})
	got, err := App(helm, cfg, &Packed{Secrets: []ContentSecret{{Name: "my-bd-content-a", Dir: "chart"}}})
	if err != nil {
		t.Fatalf("App: %v", err)
	}
	want := []kappctrlv1alpha1.AppTemplate{
		{HelmTemplate: &kappctrlv1alpha1.AppTemplateHelmTemplate{
			Name: "my-bd", Namespace: "apps", Path: "chart",
			ValuesFrom: []kappctrlv1alpha1.AppTemplateValuesSource{{Path: bundlefiles.ValuesFile}},
		}},
		{Ytt: &kappctrlv1alpha1.AppTemplateYtt{
			Paths: []string{"-"}, FileMarks: []string{"stdin.yml:type=yaml-plain"},
			Inline: &kappctrlv1alpha1.AppFetchInline{Paths: map[string]string{kappConfigFile: ownerLabelsConfig("my-bd")}},
		}},
	}
	if d := cmp.Diff(want, got.Spec.Template); d != "" {
		t.Errorf("template mismatch (-want +got):\n%s", d)
	}
	if got.Spec.Fetch[0].Inline == nil {
		t.Error("helm content must come from the adapter's Secrets")
	}
}

// A chart whose content holds its crds/ apart: ytt reads them too, and
// tells kapp they exist. Other charts' Apps stay as they were.
func TestApp_HelmChartCRDs(t *testing.T) {
	t.Parallel()
	helm := bd(rukpakv1alpha2.ClassHelm, rukpakv1alpha2.BundleSource{Type: "http", HTTP: &rukpakv1alpha2.HTTPSource{URL: "https://x/c.tgz"}})
	got, err := App(helm, cfg, &Packed{Secrets: []ContentSecret{{Name: "a", Dir: "chart"}, {Name: "b", Dir: bundlefiles.ChartCRDsDir + "/crds"}}})
	if err != nil {
		t.Fatalf("App: %v", err)
	}
	want := &kappctrlv1alpha1.AppTemplateYtt{
		Paths:     []string{"-", bundlefiles.ChartCRDsDir},
		FileMarks: []string{"stdin.yml:type=yaml-plain", "**/*:type=yaml-plain", ChartCRDsFile + ":type=yaml-template"},
		Inline:    &kappctrlv1alpha1.AppFetchInline{Paths: map[string]string{kappConfigFile: ownerLabelsConfig("my-bd"), ChartCRDsFile: chartCRDsOverlay}},
	}
	if d := cmp.Diff(want, got.Spec.Template[1].Ytt); d != "" {
		t.Errorf("ytt step (-want +got):\n%s", d)
	}
	if !KeepsChartCRDs(got) {
		t.Error("KeepsChartCRDs is false")
	}
	plain, err := App(helm, cfg, &Packed{Secrets: []ContentSecret{{Name: "a", Dir: "chart"}}})
	if err != nil || KeepsChartCRDs(plain) {
		t.Errorf("a chart without crds/: KeepsChartCRDs %v, %v", KeepsChartCRDs(plain), err)
	}
}
