package servemode

import (
	"crypto/sha256"
	"encoding/hex"
	"path"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packaging"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// The serve mode's packaging objects, made without a client.

// packageSet is what one generation publishes and installs in the serve
// mode.
type packageSet struct {
	version string
	// made names what version was picked from (packageVersion).
	made     string
	metadata *datav1alpha1.PackageMetadata
	pkg      *datav1alpha1.Package
	// values is nil when the Package takes none.
	values  *corev1.Secret
	install *packagingv1alpha1.PackageInstall
}

// key names what the set keeps when what it supersedes is removed: its
// version and its values Secret (new values keep the version).
func (s *packageSet) key() string {
	if s.values == nil {
		return s.version
	}
	return s.version + "/" + s.values.Name
}

// packageDraft is a generation's Package before its version is known.
type packageDraft struct {
	// app is the App the App mode would write; its account and sync
	// period go to the PackageInstall.
	app      *kappctrlv1alpha1.App
	template *kappctrlv1alpha1.AppSpec
	// values are a helm chart's; nil for other classes.
	values []byte
}

// draftPackage makes the Package's App spec: the App the App mode would
// write in style (the live App's, so switching modes changes no
// selector), after fetch, with helm values moved out of the content into
// the values Secret, so a values change is no new Package.
func draftPackage(bd *rukpakv1alpha2.BundleDeployment, cfg translate.Config, c *translate.Packed, style translate.Style) (packageDraft, error) {
	var d packageDraft
	if bd.Spec.ProvisionerClassName == rukpakv1alpha2.ClassHelm {
		var err error
		if d.values, err = bundlefiles.HelmValues(bd); err != nil {
			return d, err
		}
		c = withoutValues(c)
	}
	app, err := translate.AppInStyle(bd, cfg, c, style)
	if err != nil {
		return d, err
	}
	d.app, d.template = app, packaging.ServedAppTemplate(app, app.Spec.Fetch[0], bundlefiles.ChartDir)
	return d, nil
}

// pickVersion is the version a template is published under: v, the
// bundle's own, unless a Package of v holds another template (atV is the
// content version of what it holds, "" when there is none) or the
// template was published under its content version cv before (atCV).
func pickVersion(v, cv, atV, atCV string) string {
	if atV == cv || (atV == "" && atCV == "") {
		return v
	}
	return cv
}

// packageObjects are the packaging objects of a draft at version, all in
// namespace and labelled as bd's.
func packageObjects(bd *rukpakv1alpha2.BundleDeployment, namespace string, d packageDraft, version string, identity packaging.Identity, schema []byte) *packageSet {
	set := &packageSet{version: version}
	for _, o := range packaging.Objects(packaging.Spec{
		BundleDeployment: bd, Version: version, Identity: identity, Template: d.template, ValuesSchema: schema, Values: d.values,
		Namespace: namespace, ServiceAccountName: d.app.Spec.ServiceAccountName, SyncPeriod: d.app.Spec.SyncPeriod,
	}) {
		o.SetLabels(translate.OwnerLabels(bd.Name))
		switch o := o.(type) {
		case *datav1alpha1.PackageMetadata:
			set.metadata = o
		case *datav1alpha1.Package:
			set.pkg = o
		case *corev1.Secret:
			set.values = valuesSecret(bd, o)
		case *packagingv1alpha1.PackageInstall:
			set.install = o
		}
	}
	pi := set.install
	// Content versions do not order, and the BundleDeployment's spec,
	// not the highest version, decides what is installed.
	pi.Annotations = map[string]string{packagingDowngradable: ""}
	pi.OwnerReferences = translate.OwnerReferences(bd)
	if set.values != nil {
		pi.Spec.Values[0].SecretRef.Name = set.values.Name
	}
	return set
}

// packagingDowngradable lets a PackageInstall install a version lower than
// the last it attempted (kapp-controller v0.53.1
// pkg/packageinstall/packageinstall.go).
const packagingDowngradable = "packaging.carvel.dev/downgradable"

// valuesSecret is the values Secret named by its values: new values are a
// new Secret, so the PackageInstall's spec and its App's change with them
// and kapp-controller's report of the App speaks for them.
func valuesSecret(bd *rukpakv1alpha2.BundleDeployment, s *corev1.Secret) *corev1.Secret {
	data := []byte(s.StringData[packaging.ValuesKey])
	sum := sha256.Sum256(data)
	immutable := true
	s.Name = packaging.ValuesSecretName(bd.Name) + "-" + hex.EncodeToString(sum[:])[:10]
	s.Labels[LabelPackageValues] = "true"
	s.OwnerReferences = translate.OwnerReferences(bd)
	s.StringData, s.Data, s.Immutable = nil, map[string][]byte{packaging.ValuesKey: data}, &immutable
	return s
}

// withoutValues drops the Secret holding the values file from c.
func withoutValues(c *translate.Packed) *translate.Packed {
	if c == nil {
		return nil
	}
	out := *c
	out.Secrets = nil
	for _, s := range c.Secrets {
		if s.Dir != path.Dir(bundlefiles.ValuesFile) {
			out.Secrets = append(out.Secrets, s)
		}
	}
	return &out
}
