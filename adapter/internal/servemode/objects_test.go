package servemode

import (
	"regexp"
	"strings"
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/packaging"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func TestPickVersion(t *testing.T) {
	t.Parallel()
	const v, cv = "0.1.0", "0.0.0-sha256-0123456789abcdef"
	for _, tt := range []struct {
		name      string
		atV, atCV string
		want      string
	}{
		{name: "nothing published: the bundle's version", want: v},
		{name: "the same template published under it: the bundle's version", atV: cv, want: v},
		{name: "another template published under it: the content version", atV: "0.0.0-sha256-fedcba9876543210", want: cv},
		{name: "published under the content version before: kept there, not republished", atCV: cv, want: cv},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := pickVersion(v, cv, tt.atV, tt.atCV); got != tt.want {
				t.Fatalf("pickVersion() = %q, want %q", got, tt.want)
			}
		})
	}
}

var servedCfg = translate.Config{SystemNamespace: "rukpak-system", ServiceAccountName: "installer", SyncPeriod: 10 * time.Minute}

func servedHelmBD(values string) *rukpakv1alpha2.BundleDeployment {
	return &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", UID: "uid-1", Generation: 3},
		Spec: rukpakv1alpha2.BundleDeploymentSpec{
			ProvisionerClassName: rukpakv1alpha2.ClassHelm, InstallNamespace: "apps",
			Source: rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP, HTTP: &rukpakv1alpha2.HTTPSource{URL: "https://example.com/c.tgz"}},
			Config: &apiextensionsv1.JSON{Raw: []byte(`{"values":"` + values + `"}`)},
		},
	}
}

var helmContent = &translate.Packed{Secrets: []translate.ContentSecret{
	{Name: "hello-content-chart", Dir: "chart"},
	{Name: "hello-content-values", Dir: "rukpak-kapp-values"},
}}

func TestPackageObjectsHelm(t *testing.T) {
	t.Parallel()
	d, err := draftPackage(servedHelmBD("replicaCount: 2"), servedCfg, helmContent, translate.StyleAsBundled)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]kappctrlv1alpha1.AppFetchInlineSource{{SecretRef: &kappctrlv1alpha1.AppFetchInlineSourceRef{Name: "hello-content-chart", DirectoryPath: "chart"}}},
		d.template.Fetch[0].Inline.PathsFrom); diff != "" {
		t.Fatalf("the Package fetches the values' Secret too (-want +got):\n%s", diff)
	}
	if h := d.template.Template[0].HelmTemplate; h == nil || h.Path != "chart" || len(h.ValuesFrom) != 0 {
		t.Fatalf("helmTemplate = %+v, want the chart without the content's values file", h)
	}
	set := packageObjects(servedHelmBD("replicaCount: 2"), "rukpak-system", d, "0.1.0", packaging.Identity{Version: "0.1.0", DisplayName: "hello-world"}, nil)
	if set.pkg.Name != "hello.bundles.rukpak-kapp.dev.0.1.0" || set.metadata.Name != "hello.bundles.rukpak-kapp.dev" {
		t.Fatalf("Package %s, PackageMetadata %s", set.pkg.Name, set.metadata.Name)
	}
	if !regexp.MustCompile(`^hello-values-[0-9a-f]{10}$`).MatchString(set.values.Name) || string(set.values.Data[packaging.ValuesKey]) != "replicaCount: 2\n" ||
		set.values.Labels[LabelPackageValues] != "true" || !metav1.IsControlledBy(set.values, servedHelmBD("")) {
		t.Fatalf("values Secret = %s %v %v", set.values.Name, set.values.Labels, set.values.Data)
	}
	pi := set.install
	if _, ok := pi.Annotations[packagingDowngradable]; !ok || !metav1.IsControlledBy(pi, servedHelmBD("")) {
		t.Fatalf("PackageInstall annotations %v, owners %v", pi.Annotations, pi.OwnerReferences)
	}
	if pi.Name != "hello" || pi.Namespace != "rukpak-system" || pi.Spec.DefaultNamespace != "apps" || pi.Spec.ServiceAccountName != "installer" ||
		pi.Spec.Values[0].SecretRef.Name != set.values.Name || *pi.Spec.SyncPeriod != *d.app.Spec.SyncPeriod {
		t.Fatalf("PackageInstall %s/%s spec %+v", pi.Namespace, pi.Name, pi.Spec)
	}
	for _, o := range []metav1.Object{set.metadata, set.pkg, set.values, pi} {
		if o.GetLabels()[rukpakv1alpha2.LabelOwnerName] != "hello" {
			t.Fatalf("%s has no owner labels: %v", o.GetName(), o.GetLabels())
		}
	}

	// New values: a new Secret, and so a new PackageInstall spec; the
	// Package's template stays.
	d2, err := draftPackage(servedHelmBD("replicaCount: 3"), servedCfg, helmContent, translate.StyleAsBundled)
	if err != nil {
		t.Fatal(err)
	}
	set2 := packageObjects(servedHelmBD("replicaCount: 3"), "rukpak-system", d2, "0.1.0", packaging.Identity{}, nil)
	if set2.values.Name == set.values.Name {
		t.Fatal("new values kept the values Secret's name")
	}
	if diff := cmp.Diff(d.template, d2.template); diff != "" {
		t.Fatalf("a values change changed the Package's template (-old +new):\n%s", diff)
	}
}

func TestPackageObjectsPlain(t *testing.T) {
	t.Parallel()
	bd := &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "uid-2"},
		Spec: rukpakv1alpha2.BundleDeploymentSpec{ProvisionerClassName: rukpakv1alpha2.ClassPlain, InstallNamespace: "apps",
			Source: rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: "registry.example/p:v1"}}},
	}
	for _, style := range []translate.Style{translate.StyleAsBundled, translate.StyleLabelScoped} {
		d, err := draftPackage(bd, servedCfg, nil, style)
		if err != nil {
			t.Fatal(err)
		}
		// The style survives into the App kapp-controller makes from the
		// template, so the next reconcile sees the same style.
		made := &kappctrlv1alpha1.App{Spec: *d.template}
		if got := translate.StyleOf(made); got != style {
			t.Fatalf("a %s template reads back as %s", style, got)
		}
		if d.template.Fetch[0].Image.URL != "registry.example/p:v1" || d.template.ServiceAccountName != "" || d.template.DefaultNamespace != "" {
			t.Fatalf("template = %+v", d.template)
		}
		identity, _, err := packaging.IdentityOf(bd, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		set := packageObjects(bd, "rukpak-system", d, "1.0.0", identity, nil)
		if set.values != nil || len(set.install.Spec.Values) != 0 {
			t.Fatal("a plain bundle got values")
		}
		if !strings.HasPrefix(set.pkg.Name, "p.bundles.rukpak-kapp.dev.") {
			t.Fatalf("Package %s", set.pkg.Name)
		}
	}
}
