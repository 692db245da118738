package translate

import (
	"fmt"
	"strings"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// helmTemplate renders the chart as rukpak did (release = BD name, namespace
// = installNamespace, CRDs of templates/ included), then passes the output
// through ytt as plain YAML so the kapp configuration can ride along, with
// the chart's crds/ that the content holds apart (bundlefiles.ChartCRDsDir),
// which kapp is told exist.
func helmTemplate(bd *rukpakv1alpha2.BundleDeployment, kappConfig string, content *Packed) []kappctrlv1alpha1.AppTemplate {
	paths, marks := []string{"-"}, []string{"stdin.yml:type=yaml-plain"}
	inline := map[string]string{kappConfigFile: kappConfig}
	if content.hasDir(bundlefiles.ChartCRDsDir) {
		// ytt names a directory's files relative to it; the template
		// mark comes last, and the last mark of a file wins.
		paths = append(paths, bundlefiles.ChartCRDsDir)
		marks = append(marks, "**/*:type=yaml-plain", ChartCRDsFile+":type=yaml-template")
		inline[ChartCRDsFile] = chartCRDsOverlay
	}
	return []kappctrlv1alpha1.AppTemplate{
		{HelmTemplate: &kappctrlv1alpha1.AppTemplateHelmTemplate{
			Name:       bd.Name,
			Namespace:  bd.Spec.InstallNamespace,
			Path:       bundlefiles.ChartDir,
			ValuesFrom: []kappctrlv1alpha1.AppTemplateValuesSource{{Path: bundlefiles.ValuesFile}},
		}},
		{Ytt: &kappctrlv1alpha1.AppTemplateYtt{
			Paths:     paths,
			FileMarks: marks,
			Inline:    &kappctrlv1alpha1.AppFetchInline{Paths: inline},
		}},
	}
}

// hasDir says the content has files in dir or below it.
func (c *Packed) hasDir(dir string) bool {
	if c == nil {
		return false
	}
	for _, s := range c.Secrets {
		if s.Dir == dir || strings.HasPrefix(s.Dir, dir+"/") {
			return true
		}
	}
	return false
}

// ChartCRDsFile tells kapp that the chart's crds/ exist: kapp.k14s.io/exists
// makes kapp wait for an object before what depends on it and never create,
// update, claim or delete it.
const ChartCRDsFile = "rukpak-kapp-chart-crds.yml"

var chartCRDsOverlay = fmt.Sprintf(`#@ load("@ytt:overlay", "overlay")

#@ def chart_crd(i, left, right):
#@   return type(left) == "yamlfragment" and "metadata" in left and left["metadata"] != None and "annotations" in left["metadata"] and left["metadata"]["annotations"] != None and %q in left["metadata"]["annotations"]
#@ end

#@overlay/match by=chart_crd, expects="0+"
---
metadata:
  annotations:
    #@overlay/match missing_ok=True
    kapp.k14s.io/exists: ""
`, bundlefiles.AnnotationChartCRD)

// KeepsChartCRDs says app tells kapp that its chart's crds/ exist, for the
// adapter to create.
func KeepsChartCRDs(app *kappctrlv1alpha1.App) bool {
	for _, t := range app.Spec.Template {
		if t.Ytt != nil && t.Ytt.Inline != nil {
			if _, ok := t.Ytt.Inline.Paths[ChartCRDsFile]; ok {
				return true
			}
		}
	}
	return false
}
