package translate

import (
	"strings"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundle"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// helmTemplate renders the chart as rukpak did (release = BD name, namespace
// = installNamespace, CRDs of templates/ included), then passes the output
// through ytt as plain YAML so the kapp configuration can ride along, with
// the chart's crds/ that the content holds apart (bundle.ChartCRDsDir).
func helmTemplate(bd *rukpakv1alpha2.BundleDeployment, kappConfig string, content *Content) []kappctrlv1alpha1.AppTemplate {
	paths, marks := []string{"-"}, []string{"stdin.yml:type=yaml-plain"}
	if content.hasDir(bundle.ChartCRDsDir) {
		paths = append(paths, bundle.ChartCRDsDir)
		// ytt names a directory's files relative to it.
		marks = append(marks, "**/*:type=yaml-plain")
	}
	return []kappctrlv1alpha1.AppTemplate{
		{HelmTemplate: &kappctrlv1alpha1.AppTemplateHelmTemplate{
			Name:       bd.Name,
			Namespace:  bd.Spec.InstallNamespace,
			Path:       bundle.ChartDir,
			ValuesFrom: []kappctrlv1alpha1.AppTemplateValuesSource{{Path: bundle.ValuesFile}},
		}},
		{Ytt: &kappctrlv1alpha1.AppTemplateYtt{
			Paths:     paths,
			FileMarks: marks,
			Inline:    &kappctrlv1alpha1.AppFetchInline{Paths: map[string]string{kappConfigFile: kappConfig}},
		}},
	}
}

// hasDir says the content has files in dir or below it.
func (c *Content) hasDir(dir string) bool {
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
