package translate

import (
	"fmt"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// templateFor picks the template steps for the BD's format.
func templateFor(bd *rukpakv1alpha2.BundleDeployment, kappConfig string, content *Packed) ([]kappctrlv1alpha1.AppTemplate, error) {
	switch bd.Spec.ProvisionerClassName {
	case rukpakv1alpha2.ClassPlain, rukpakv1alpha2.ClassRegistry:
		return plainTemplate(kappConfig), nil
	case rukpakv1alpha2.ClassHelm:
		return helmTemplate(bd, kappConfig, content), nil
	default:
		return nil, &UnsupportedError{Reason: fmt.Sprintf("provisioner class %q is not supported yet", bd.Spec.ProvisionerClassName)}
	}
}

// plainTemplate passes every file under manifests/ through ytt as plain
// YAML: user files are never evaluated as ytt templates, and JSON or
// oddly named files still count as manifests, as they did in rukpak. The
// kapp configuration rides along as an inline file.
func plainTemplate(kappConfig string) []kappctrlv1alpha1.AppTemplate {
	return []kappctrlv1alpha1.AppTemplate{{
		Ytt: &kappctrlv1alpha1.AppTemplateYtt{
			Paths:     []string{bundlefiles.ManifestsDir},
			FileMarks: []string{"**/*:type=yaml-plain"},
			Inline:    &kappctrlv1alpha1.AppFetchInline{Paths: map[string]string{kappConfigFile: kappConfig}},
		},
	}}
}
