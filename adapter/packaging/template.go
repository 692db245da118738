package packaging

import (
	"slices"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
)

// AppTemplate is the App spec of a Package: the template and deploy steps
// of app, the App the adapter makes for the BundleDeployment
// (translate.AppInStyle), after fetch. The account, sync period and default
// namespace are the PackageInstall's to say. A helm chart is at chartPath
// of what fetch brings ("" for its root), and its values come from the
// PackageInstall's values Secrets, which kapp-controller adds to the first
// helmTemplate step, instead of from a file of the content.
func AppTemplate(app *kappctrlv1alpha1.App, fetch kappctrlv1alpha1.AppFetch, chartPath string) *kappctrlv1alpha1.AppSpec {
	spec := ServedAppTemplate(app, fetch, chartPath)
	withoutChartCRDs(spec, chartPath)
	return spec
}

// ServedAppTemplate is AppTemplate for a Package the adapter serves itself
// (the serve mode): kapp is told that a chart's crds/ exist, as in the App
// mode, and the adapter creates the absent ones (adapter/controllers/chartcrds), so no
// App owns them and deleting the BundleDeployment keeps them.
func ServedAppTemplate(app *kappctrlv1alpha1.App, fetch kappctrlv1alpha1.AppFetch, chartPath string) *kappctrlv1alpha1.AppSpec {
	spec := app.Spec.DeepCopy()
	spec.Fetch = []kappctrlv1alpha1.AppFetch{fetch}
	spec.ServiceAccountName, spec.SyncPeriod, spec.DefaultNamespace = "", nil, ""
	for i := range spec.Template {
		h := spec.Template[i].HelmTemplate
		if h == nil {
			continue
		}
		h.Path = chartPath
		var kept []kappctrlv1alpha1.AppTemplateValuesSource
		for _, v := range h.ValuesFrom {
			if v.Path != bundlefiles.ValuesFile {
				kept = append(kept, v)
			}
		}
		h.ValuesFrom = kept
	}
	return spec
}

// withoutChartCRDs lets kapp apply a chart's crds/ in a Package as it
// applies everything else: no adapter creates them where the Package is
// installed. Content the adapter laid out (chartPath bundlefiles.ChartDir)
// holds them apart, in bundlefiles.ChartCRDsDir; a chart fetched as it is
// (another chartPath) still has them among its files, for helm to render.
func withoutChartCRDs(spec *kappctrlv1alpha1.AppSpec, chartPath string) {
	for i := range spec.Template {
		y := spec.Template[i].Ytt
		if y == nil || y.Inline == nil {
			continue
		}
		if _, ok := y.Inline.Paths[translate.ChartCRDsFile]; !ok {
			continue
		}
		delete(y.Inline.Paths, translate.ChartCRDsFile)
		y.FileMarks = slices.DeleteFunc(y.FileMarks, func(m string) bool {
			return m == translate.ChartCRDsFile+":type=yaml-template" || (chartPath != bundlefiles.ChartDir && m == "**/*:type=yaml-plain")
		})
		if chartPath != bundlefiles.ChartDir {
			y.Paths = slices.DeleteFunc(y.Paths, func(p string) bool { return p == bundlefiles.ChartCRDsDir })
		}
	}
}
