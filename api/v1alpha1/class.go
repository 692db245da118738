package v1alpha1

import (
	"encoding/json"

	"github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// OwnClass is the v1alpha1 spec.provisionerClassName of a stored
// BundleDeployment: the class its BundleDeployment controller claims it by,
// as rukpak v0.16 claimed it (its template's class, the v1alpha2 one,
// says how its Bundle is unpacked). It reads the conversion's annotation,
// as FromV1alpha2 does, without converting the object.
func OwnClass(bd *v1alpha2.BundleDeployment) string {
	var spec v1alpha1Spec
	if raw, ok := bd.Annotations[AnnotationV1alpha1Spec]; ok && json.Unmarshal([]byte(raw), &spec) == nil && spec.ProvisionerClassName != nil {
		return *spec.ProvisionerClassName
	}
	return OwnClassFor(bd.Spec.ProvisionerClassName)
}
