package translate

import (
	"fmt"
	"strings"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// ManifestsDir is where a plain bundle keeps its objects.
const ManifestsDir = "manifests"

// templateFor picks the template steps for the BD's format.
func templateFor(bd *rukpakv1alpha2.BundleDeployment, kappConfig string) ([]kappctrlv1alpha1.AppTemplate, error) {
	switch bd.Spec.ProvisionerClassName {
	case rukpakv1alpha2.ClassPlain, rukpakv1alpha2.ClassRegistry:
		return plainTemplate(kappConfig), nil
	case rukpakv1alpha2.ClassHelm:
		return helmTemplate(bd, kappConfig), nil
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
			Paths:     []string{ManifestsDir},
			FileMarks: []string{"**/*:type=yaml-plain"},
			Inline:    &kappctrlv1alpha1.AppFetchInline{Paths: map[string]string{kappConfigFile: kappConfig}},
		},
	}}
}

// PlainFiles keeps the files a plain bundle installs: those under manifests/.
// A bundle without them is invalid, in rukpak's words.
func PlainFiles(files map[string][]byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	sawDir := false
	for p, data := range files {
		if rest, ok := strings.CutPrefix(p, ManifestsDir+"/"); ok {
			sawDir = true
			if rest != "" && !strings.HasSuffix(rest, "/") {
				out[p] = data
			}
		}
	}
	if !sawDir {
		return nil, &InvalidBundleError{Reason: "readdir manifests: file does not exist: the bundle has no manifests/ directory"}
	}
	if len(out) == 0 {
		return nil, &InvalidBundleError{Reason: "found zero objects: plain+v0 bundles are required to contain at least one object"}
	}
	return out, nil
}

// InvalidBundleError says the fetched content is not a valid bundle.
type InvalidBundleError struct{ Reason string }

func (e *InvalidBundleError) Error() string { return e.Reason }
