package packaging

import (
	"strings"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	versionsv1alpha1 "carvel.dev/vendir/pkg/vendir/versions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// ValuesKey is the key of the values Secret that holds the chart values.
const ValuesKey = "values.yaml"

// Spec is everything the packaging objects of one BundleDeployment say.
type Spec struct {
	BundleDeployment *rukpakv1alpha2.BundleDeployment
	// Version is the Package's (see Version).
	Version  string
	Identity Identity
	// Template is the Package's App spec (see AppTemplate).
	Template *kappctrlv1alpha1.AppSpec
	// ValuesSchema is the values' OpenAPI v3 schema as JSON, or nil.
	ValuesSchema []byte
	// Values are the chart values; nil when the Package takes none.
	Values []byte
	// Namespace holds every object: the PackageInstall and its App, and
	// the Package, which kapp-controller only looks for there or in its
	// global packaging namespace.
	Namespace string
	// ServiceAccountName is the account kapp installs with.
	ServiceAccountName string
	SyncPeriod         *metav1.Duration
	// InstallerRBAC adds that ServiceAccount, bound to cluster-admin (a
	// bundle may hold CRDs and cluster roles).
	InstallerRBAC bool
}

// Objects are, in apply order, the installer's account (when asked for),
// the PackageMetadata, the Package, the values Secret (when there are
// values) and the PackageInstall that installs the Package's version.
func Objects(s Spec) []client.Object {
	bd := s.BundleDeployment
	refName := RefName(bd.Name)
	var objs []client.Object
	if s.InstallerRBAC {
		objs = append(objs, installerRBAC(s)...)
	}
	meta := &datav1alpha1.PackageMetadata{
		TypeMeta:   typeMeta(datav1alpha1.SchemeGroupVersion.String(), "PackageMetadata"),
		ObjectMeta: metav1.ObjectMeta{Name: refName, Namespace: s.Namespace},
		Spec: datav1alpha1.PackageMetadataSpec{
			DisplayName:      s.Identity.DisplayName,
			ShortDescription: s.Identity.Description,
			LongDescription:  "The content of the " + formatWord(bd) + " BundleDeployment " + bd.Name + ", exported by rukpak-kapp.",
			ProviderName:     "rukpak-kapp",
		},
	}
	pkg := &datav1alpha1.Package{
		TypeMeta:   typeMeta(datav1alpha1.SchemeGroupVersion.String(), "Package"),
		ObjectMeta: metav1.ObjectMeta{Name: PackageName(refName, s.Version), Namespace: s.Namespace},
		Spec: datav1alpha1.PackageSpec{
			RefName:  refName,
			Version:  s.Version,
			Template: datav1alpha1.AppTemplateSpec{Spec: s.Template},
		},
	}
	if s.ValuesSchema != nil {
		pkg.Spec.ValuesSchema.OpenAPIv3 = runtime.RawExtension{Raw: s.ValuesSchema}
	}
	objs = append(objs, meta, pkg)
	install := &packagingv1alpha1.PackageInstall{
		TypeMeta:   typeMeta(packagingv1alpha1.SchemeGroupVersion.String(), "PackageInstall"),
		ObjectMeta: metav1.ObjectMeta{Name: bd.Name, Namespace: s.Namespace},
		Spec: packagingv1alpha1.PackageInstallSpec{
			ServiceAccountName: s.ServiceAccountName,
			PackageRef:         &packagingv1alpha1.PackageRef{RefName: refName, VersionSelection: VersionSelection(s.Version)},
			SyncPeriod:         s.SyncPeriod,
			DefaultNamespace:   bd.Spec.InstallNamespace,
		},
	}
	if s.Values != nil {
		secret := &corev1.Secret{
			TypeMeta:   typeMeta("v1", "Secret"),
			ObjectMeta: metav1.ObjectMeta{Name: ValuesSecretName(bd.Name), Namespace: s.Namespace},
			StringData: map[string]string{ValuesKey: string(s.Values)},
		}
		objs = append(objs, secret)
		install.Spec.Values = []packagingv1alpha1.PackageInstallValues{{SecretRef: &packagingv1alpha1.PackageInstallValuesSecretRef{Name: secret.Name}}}
	}
	return append(objs, install)
}

// ValuesSecretName is the name of bdName's values Secret.
func ValuesSecretName(bdName string) string { return bdName + "-values" }

// VersionSelection pins version. For a prerelease (a plain bundle's
// content version) it asks for prereleases too. kapp-controller v0.53.1
// adds that itself when it picks the version for an exact constraint
// (pkg/packageinstall/packageinstall.go), but not when a new Package
// arrives and it looks for the PackageInstalls that may take it
// (packageinstall_version_handler.go, vendir's HighestConstrainedVersion,
// which drops prereleases unless asked): without it a PackageInstall
// applied before its Package waits for its retry back-off instead.
func VersionSelection(version string) *versionsv1alpha1.VersionSelectionSemver {
	sel := &versionsv1alpha1.VersionSelectionSemver{Constraints: version}
	if strings.Contains(version, "-") {
		sel.Prereleases = &versionsv1alpha1.VersionSelectionSemverPrereleases{}
	}
	return sel
}

func installerRBAC(s Spec) []client.Object {
	sa := &corev1.ServiceAccount{
		TypeMeta:   typeMeta("v1", "ServiceAccount"),
		ObjectMeta: metav1.ObjectMeta{Name: s.ServiceAccountName, Namespace: s.Namespace},
	}
	binding := &rbacv1.ClusterRoleBinding{
		TypeMeta:   typeMeta(rbacv1.SchemeGroupVersion.String(), "ClusterRoleBinding"),
		ObjectMeta: metav1.ObjectMeta{Name: s.Namespace + "-" + s.ServiceAccountName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: s.ServiceAccountName, Namespace: s.Namespace}},
	}
	return []client.Object{sa, binding}
}

// formatOf is what a Package says of bd's bundle format: its word, and
// where its version comes from.
func formatOf(bd *rukpakv1alpha2.BundleDeployment) (word, versionFrom string) {
	switch bd.Spec.ProvisionerClassName {
	case rukpakv1alpha2.ClassHelm:
		return "helm", "the chart's Chart.yaml"
	case rukpakv1alpha2.ClassRegistry:
		return "registry+v1", "the ClusterServiceVersion's spec.version"
	}
	return "plain", "the bundle"
}

func formatWord(bd *rukpakv1alpha2.BundleDeployment) string {
	word, _ := formatOf(bd)
	return word
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}
