package plan

import (
	"encoding/json"
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// BundleDeployment is the BundleDeployment oi writes to install step: an
// ordinary rukpak BundleDeployment of the bundle's image and the
// install's values, which names the install, the generation it was
// written from and the catalog entry it installs. What oi does not set is
// not here, so that a server-side apply leaves the rest to its owners.
func BundleDeployment(oi *catalogsv1alpha1.OperatorInstall, step Step) *rukpakv1alpha2.BundleDeployment {
	s := oi.Spec
	class := rukpakv1alpha2.ClassRegistry
	if s.Format == catalogsv1alpha1.FormatPlainV0 {
		class = rukpakv1alpha2.ClassPlain
	}
	ann := map[string]string{
		catalog.AnnotationOperatorInstall:           Self(oi),
		catalog.AnnotationOperatorInstallGeneration: fmt.Sprint(oi.Generation),
		catalog.AnnotationChannel:                   step.Entry.Channel,
		catalog.AnnotationBundle:                    step.Entry.Bundle,
		catalog.AnnotationVersion:                   step.Entry.Version,
		// The PackageInstall is already the Carvel view of this install;
		// served as a Package of its own it would show twice in kctrl.
		rukpakv1alpha2.AnnotationInstallWith: "app",
	}
	if s.HealthExpressions != "" {
		ann[rukpakv1alpha2.AnnotationHealthExpressions] = s.HealthExpressions
	}
	if s.ServiceAccountName != "" {
		ann[rukpakv1alpha2.AnnotationServiceAccount] = s.ServiceAccountName
	}
	if step.Lock != "" {
		ann[bundlefiles.AnnotationImagesLock] = step.Lock
	}
	bd := &rukpakv1alpha2.BundleDeployment{
		TypeMeta: metav1.TypeMeta{APIVersion: rukpakv1alpha2.GroupVersion.String(), Kind: "BundleDeployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        BundleDeploymentName(oi),
			Labels:      map[string]string{catalog.LabelPackage: step.Entry.Package},
			Annotations: ann,
		},
		Spec: rukpakv1alpha2.BundleDeploymentSpec{
			ProvisionerClassName: class,
			InstallNamespace:     s.InstallNamespace,
			Source:               rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: step.Image}},
		},
	}
	if class == rukpakv1alpha2.ClassRegistry && len(s.WatchNamespaces) > 0 {
		raw, _ := json.Marshal(map[string]any{"watchNamespaces": s.WatchNamespaces})
		bd.Spec.Config = &apiextensionsv1.JSON{Raw: raw}
	}
	return bd
}

// Owner is how a BundleDeployment relates to the install oi.
type Owner int

const (
	// Absent: there is no BundleDeployment of the install's name.
	Absent Owner = iota
	// Owned: oi writes it.
	Owned
	// Adoptable: a catalog Package's template rendered it for oi's
	// PackageInstall; oi adopts it in place.
	Adoptable
	// Foreign: it is another's; oi writes nothing over it.
	Foreign
)

// OwnerOf says how bd (nil: none) relates to oi.
func OwnerOf(oi *catalogsv1alpha1.OperatorInstall, bd *rukpakv1alpha2.BundleDeployment) Owner {
	switch {
	case bd == nil:
		return Absent
	case bd.Annotations[catalog.AnnotationOperatorInstall] == Self(oi):
		return Owned
	case bd.Annotations[catalog.AnnotationOperatorInstall] == "" && bd.Labels[catalog.LabelPackage] == oi.Spec.PackageName &&
		bd.Annotations[catalog.AnnotationPackagesNS] == oi.Namespace && bd.Annotations[catalog.AnnotationInstall] == oi.Name:
		return Adoptable
	}
	return Foreign
}

// ForeignMessage says why oi writes nothing over bd.
func ForeignMessage(oi *catalogsv1alpha1.OperatorInstall, bd *rukpakv1alpha2.BundleDeployment) string {
	by := "no OperatorInstall"
	if o := bd.Annotations[catalog.AnnotationOperatorInstall]; o != "" {
		by = "OperatorInstall " + o
	}
	return fmt.Sprintf("BundleDeployment %s exists and is not this install's (it is written by %s), so nothing is written over it: "+
		"give this install another one with the value bundleDeploymentName, or delete that BundleDeployment", bd.Name, by)
}

// KappLabels are kapp's labels on an object it deployed, which an adopted
// BundleDeployment no longer carries: kapp's deploy of the install's App
// then neither sees nor deletes it.
var KappLabels = []string{"kapp.k14s.io/app", "kapp.k14s.io/association"}

// Adoption is the merge patch that takes bd from the template that
// rendered it: kapp's labels and the annotations the template copied
// (catalog.AdoptedAnnotations) removed, the install named. Its spec and
// everything else stay, so nothing it installed is restarted.
func Adoption(oi *catalogsv1alpha1.OperatorInstall, bd *rukpakv1alpha2.BundleDeployment) []byte {
	labels := map[string]any{}
	for _, k := range KappLabels {
		if _, ok := bd.Labels[k]; ok {
			labels[k] = nil
		}
	}
	ann := map[string]any{catalog.AnnotationOperatorInstall: Self(oi)}
	for _, k := range slices.Concat(catalog.AdoptedAnnotations, []string{"kapp.k14s.io/identity", "kapp.k14s.io/original", "kapp.k14s.io/original-diff-md5"}) {
		if _, ok := bd.Annotations[k]; ok {
			ann[k] = nil
		}
	}
	meta := map[string]any{"annotations": ann, "resourceVersion": bd.ResourceVersion}
	if len(labels) > 0 {
		meta["labels"] = labels
	}
	b, _ := json.Marshal(map[string]any{"metadata": meta})
	return b
}
