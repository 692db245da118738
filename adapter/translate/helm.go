package translate

import (
	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundle"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// helmTemplate renders the chart as rukpak did (release = BD name, namespace
// = installNamespace, CRDs included), then passes the output through ytt
// as plain YAML so the kapp configuration can ride along.
func helmTemplate(bd *rukpakv1alpha2.BundleDeployment, kappConfig string) []kappctrlv1alpha1.AppTemplate {
	return []kappctrlv1alpha1.AppTemplate{
		{HelmTemplate: &kappctrlv1alpha1.AppTemplateHelmTemplate{
			Name:       bd.Name,
			Namespace:  bd.Spec.InstallNamespace,
			Path:       bundle.ChartDir,
			ValuesFrom: []kappctrlv1alpha1.AppTemplateValuesSource{{Path: bundle.ValuesFile}},
		}},
		{Ytt: &kappctrlv1alpha1.AppTemplateYtt{
			Paths:     []string{"-"},
			FileMarks: []string{"stdin.yml:type=yaml-plain"},
			Inline:    &kappctrlv1alpha1.AppFetchInline{Paths: map[string]string{kappConfigFile: kappConfig}},
		}},
	}
}
