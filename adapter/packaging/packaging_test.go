package packaging

import (
	"strings"
	"testing"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"carvel.dev/vendir/pkg/vendir/versions"
	versionsv1alpha1 "carvel.dev/vendir/pkg/vendir/versions/v1alpha1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func bd(name, class string, annotations map[string]string) *rukpakv1alpha2.BundleDeployment {
	return &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec:       rukpakv1alpha2.BundleDeploymentSpec{ProvisionerClassName: class, InstallNamespace: "apps"},
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	files := map[string][]byte{"manifests/cm.yaml": []byte("kind: ConfigMap")}
	tests := []struct {
		name     string
		bd       *rukpakv1alpha2.BundleDeployment
		identity Identity
		want     string
		wantErr  string
	}{
		{name: "plain from its content", bd: bd("p", rukpakv1alpha2.ClassPlain, nil), want: ContentVersion(files)},
		{name: "plain from the annotation", bd: bd("p", rukpakv1alpha2.ClassPlain, map[string]string{rukpakv1alpha2.AnnotationPackageVersion: "1.4.0"}), want: "1.4.0"},
		{name: "helm from its chart", bd: bd("h", rukpakv1alpha2.ClassHelm, nil), identity: Identity{Version: "0.1.0-rc.1"}, want: "0.1.0-rc.1"},
		{name: "the annotation wins over the chart", bd: bd("h", rukpakv1alpha2.ClassHelm, map[string]string{rukpakv1alpha2.AnnotationPackageVersion: "2.0.0"}), identity: Identity{Version: "0.1.0"}, want: "2.0.0"},
		{name: "registry+v1 from its CSV", bd: bd("r", rukpakv1alpha2.ClassRegistry, nil), identity: Identity{Version: "0.7.1"}, want: "0.7.1"},
		{name: "a CSV without a version", bd: bd("r", rukpakv1alpha2.ClassRegistry, nil), wantErr: "the bundle has no version (the ClusterServiceVersion's spec.version is empty): set the annotation core.rukpak.io/package-version"},
		{name: "a chart version with a v", bd: bd("h", rukpakv1alpha2.ClassHelm, nil), identity: Identity{Version: "v1.0.0"}, wantErr: `the chart's Chart.yaml: version "v1.0.0" is not a semver`},
		{name: "build metadata", bd: bd("h", rukpakv1alpha2.ClassHelm, nil), identity: Identity{Version: "1.0.0+abc"}, wantErr: `version "1.0.0+abc" has build metadata, which a Package name (h.bundles.rukpak-kapp.dev.1.0.0+abc) cannot hold`},
		{name: "upper case", bd: bd("r", rukpakv1alpha2.ClassRegistry, nil), identity: Identity{Version: "1.0.0-RC1"}, wantErr: "is not a valid object name"},
		{name: "too long once kapp-controller encodes it", bd: bd(strings.Repeat("a", 130), rukpakv1alpha2.ClassPlain, map[string]string{rukpakv1alpha2.AnnotationPackageVersion: "1.0.0"}), wantErr: "kapp-controller stores at most 158"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Version(tt.bd, tt.identity, files)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Version() error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Version() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// A content version must be what kapp-controller accepts (vendir's strict
// semver), make a valid object name, and change with any byte of content.
func TestContentVersion(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, files := range []map[string][]byte{
		{"manifests/a.yaml": []byte("a")},
		{"manifests/a.yaml": []byte("b")},
		{"manifests/b.yaml": []byte("a")},
		{"manifests/a.yaml": []byte("a"), "manifests/b.yaml": nil},
		// Its digest starts 0794873306346064: all digits with a leading 0,
		// which as a numeric identifier of its own would be no semver.
		{"manifests/a.yaml": []byte("x2898")},
	} {
		v := ContentVersion(files)
		if seen[v] {
			t.Fatalf("two contents share version %s", v)
		}
		seen[v] = true
		if _, err := versions.NewSemver(v); err != nil {
			t.Fatalf("%s is no semver to kapp-controller: %v", v, err)
		}
		if errs := validation.IsDNS1123Subdomain(PackageName(RefName("bd"), v)); len(errs) > 0 {
			t.Fatalf("%s makes no object name: %v", v, errs)
		}
	}
	if ContentVersion(map[string][]byte{"a": []byte("1")}) != ContentVersion(map[string][]byte{"a": []byte("1")}) {
		t.Fatal("the same content gave two versions")
	}
}

func TestAppTemplate(t *testing.T) {
	t.Parallel()
	app := &kappctrlv1alpha1.App{Spec: kappctrlv1alpha1.AppSpec{
		ServiceAccountName: "installer", SyncPeriod: &metav1.Duration{}, DefaultNamespace: "apps",
		Fetch: []kappctrlv1alpha1.AppFetch{{Inline: &kappctrlv1alpha1.AppFetchInline{}}},
		Template: []kappctrlv1alpha1.AppTemplate{
			{HelmTemplate: &kappctrlv1alpha1.AppTemplateHelmTemplate{Name: "h", Path: bundlefiles.ChartDir, ValuesFrom: []kappctrlv1alpha1.AppTemplateValuesSource{{Path: bundlefiles.ValuesFile}}}},
			{Ytt: &kappctrlv1alpha1.AppTemplateYtt{Paths: []string{"-"}}},
		},
		Deploy: []kappctrlv1alpha1.AppDeploy{{Kapp: &kappctrlv1alpha1.AppDeployKapp{}}},
	}}
	fetch := kappctrlv1alpha1.AppFetch{HTTP: &kappctrlv1alpha1.AppFetchHTTP{URL: "https://x/c.tgz"}}
	got := AppTemplate(app, fetch, "hello-world")
	want := &kappctrlv1alpha1.AppSpec{
		Fetch: []kappctrlv1alpha1.AppFetch{fetch},
		Template: []kappctrlv1alpha1.AppTemplate{
			{HelmTemplate: &kappctrlv1alpha1.AppTemplateHelmTemplate{Name: "h", Path: "hello-world"}},
			{Ytt: &kappctrlv1alpha1.AppTemplateYtt{Paths: []string{"-"}}},
		},
		Deploy: []kappctrlv1alpha1.AppDeploy{{Kapp: &kappctrlv1alpha1.AppDeployKapp{}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("AppTemplate() (-want +got):\n%s", diff)
	}
	if app.Spec.Template[0].HelmTemplate.Path != bundlefiles.ChartDir {
		t.Fatal("AppTemplate changed the App it was given")
	}
}

func TestObjects(t *testing.T) {
	t.Parallel()
	b := bd("hello", rukpakv1alpha2.ClassHelm, nil)
	template := &kappctrlv1alpha1.AppSpec{Deploy: []kappctrlv1alpha1.AppDeploy{{Kapp: &kappctrlv1alpha1.AppDeployKapp{}}}}
	objs := Objects(Spec{BundleDeployment: b, Version: "0.0.0-sha256-ab", Identity: Identity{DisplayName: "hello-world"}, Template: template,
		Values: []byte("replicas: 2\n"), Namespace: "pkgs", ServiceAccountName: "installer", InstallerRBAC: true})
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetObjectKind().GroupVersionKind().Kind)
		if o.GetName() == "" {
			t.Fatalf("%T has no name", o)
		}
	}
	if diff := cmp.Diff([]string{"ServiceAccount", "ClusterRoleBinding", "PackageMetadata", "Package", "Secret", "PackageInstall"}, kinds); diff != "" {
		t.Fatalf("kinds (-want +got):\n%s", diff)
	}
	pkg := objs[3].(*datav1alpha1.Package)
	if pkg.Name != "hello.bundles.rukpak-kapp.dev.0.0.0-sha256-ab" || pkg.Namespace != "pkgs" || pkg.Spec.Template.Spec != template {
		t.Fatalf("Package = %s/%s with template %v", pkg.Namespace, pkg.Name, pkg.Spec.Template.Spec)
	}
	if objs[4].(*corev1.Secret).StringData[ValuesKey] != "replicas: 2\n" {
		t.Fatal("the values Secret does not hold the values")
	}
	pi := objs[5].(*packagingv1alpha1.PackageInstall)
	// The check kapp-controller makes when a Package arrives, for each
	// PackageInstall of its refName (PackageInstallVersionHandler): does
	// the PackageInstall take this version?
	got, err := versions.HighestConstrainedVersion([]string{"0.0.0-sha256-ab", "0.0.0-sha256-cd", "1.0.0"}, versionsv1alpha1.VersionSelection{Semver: pi.Spec.PackageRef.VersionSelection})
	if err != nil || got != "0.0.0-sha256-ab" {
		t.Fatalf("kapp-controller would select %q (%v)", got, err)
	}
	wantSpec := packagingv1alpha1.PackageInstallSpec{
		ServiceAccountName: "installer",
		PackageRef: &packagingv1alpha1.PackageRef{RefName: "hello.bundles.rukpak-kapp.dev", VersionSelection: &versionsv1alpha1.VersionSelectionSemver{
			Constraints: "0.0.0-sha256-ab", Prereleases: &versionsv1alpha1.VersionSelectionSemverPrereleases{},
		}},
		Values:           []packagingv1alpha1.PackageInstallValues{{SecretRef: &packagingv1alpha1.PackageInstallValuesSecretRef{Name: "hello-values"}}},
		DefaultNamespace: "apps",
	}
	if diff := cmp.Diff(wantSpec, pi.Spec); diff != "" {
		t.Fatalf("PackageInstall spec (-want +got):\n%s", diff)
	}

	plain := Objects(Spec{BundleDeployment: bd("p", rukpakv1alpha2.ClassPlain, nil), Version: "1.0.0", Template: template, Namespace: "pkgs"})
	if len(plain) != 3 {
		t.Fatalf("without values or RBAC want PackageMetadata, Package, PackageInstall; got %d objects", len(plain))
	}
	if sel := plain[2].(*packagingv1alpha1.PackageInstall).Spec.PackageRef.VersionSelection; sel.Prereleases != nil {
		t.Fatal("a release version asks for prereleases")
	}
}

// In a Package, kapp applies a chart's crds/ itself: the content the
// adapter laid out keeps them apart, a chart fetched as it is has them in
// the chart.
func TestAppTemplate_ChartCRDs(t *testing.T) {
	t.Parallel()
	app := &kappctrlv1alpha1.App{Spec: kappctrlv1alpha1.AppSpec{
		Template: []kappctrlv1alpha1.AppTemplate{
			{HelmTemplate: &kappctrlv1alpha1.AppTemplateHelmTemplate{Name: "h", Path: bundlefiles.ChartDir}},
			{Ytt: &kappctrlv1alpha1.AppTemplateYtt{
				Paths:     []string{"-", bundlefiles.ChartCRDsDir},
				FileMarks: []string{"stdin.yml:type=yaml-plain", "**/*:type=yaml-plain", translate.ChartCRDsFile + ":type=yaml-template"},
				Inline:    &kappctrlv1alpha1.AppFetchInline{Paths: map[string]string{"k.yml": "k", translate.ChartCRDsFile: "overlay"}},
			}},
		},
	}}
	laidOut := AppTemplate(app, kappctrlv1alpha1.AppFetch{Inline: &kappctrlv1alpha1.AppFetchInline{}}, bundlefiles.ChartDir).Template[1].Ytt
	want := &kappctrlv1alpha1.AppTemplateYtt{
		Paths:     []string{"-", bundlefiles.ChartCRDsDir},
		FileMarks: []string{"stdin.yml:type=yaml-plain", "**/*:type=yaml-plain"},
		Inline:    &kappctrlv1alpha1.AppFetchInline{Paths: map[string]string{"k.yml": "k"}},
	}
	if diff := cmp.Diff(want, laidOut); diff != "" {
		t.Errorf("laid-out content (-want +got):\n%s", diff)
	}
	asFetched := AppTemplate(app, kappctrlv1alpha1.AppFetch{HTTP: &kappctrlv1alpha1.AppFetchHTTP{URL: "https://x/c.tgz"}}, "hello-world").Template[1].Ytt
	want = &kappctrlv1alpha1.AppTemplateYtt{
		Paths:     []string{"-"},
		FileMarks: []string{"stdin.yml:type=yaml-plain"},
		Inline:    &kappctrlv1alpha1.AppFetchInline{Paths: map[string]string{"k.yml": "k"}},
	}
	if diff := cmp.Diff(want, asFetched); diff != "" {
		t.Errorf("a chart fetched as it is (-want +got):\n%s", diff)
	}
	if !translate.KeepsChartCRDs(app) {
		t.Fatal("AppTemplate changed the App it was given")
	}
}

func TestServedAppTemplate_KeepsTheChartCRDs(t *testing.T) {
	t.Parallel()
	app := &kappctrlv1alpha1.App{Spec: kappctrlv1alpha1.AppSpec{
		Fetch: []kappctrlv1alpha1.AppFetch{{Inline: &kappctrlv1alpha1.AppFetchInline{}}},
		Template: []kappctrlv1alpha1.AppTemplate{
			{HelmTemplate: &kappctrlv1alpha1.AppTemplateHelmTemplate{Name: "h", Path: bundlefiles.ChartDir}},
			{Ytt: &kappctrlv1alpha1.AppTemplateYtt{Paths: []string{"-", bundlefiles.ChartCRDsDir},
				Inline:    &kappctrlv1alpha1.AppFetchInline{Paths: map[string]string{translate.ChartCRDsFile: "overlay"}},
				FileMarks: []string{translate.ChartCRDsFile + ":type=yaml-template"}}},
		},
	}}
	served := ServedAppTemplate(app, app.Spec.Fetch[0], bundlefiles.ChartDir)
	exported := AppTemplate(app, app.Spec.Fetch[0], bundlefiles.ChartDir)
	if _, ok := served.Template[1].Ytt.Inline.Paths[translate.ChartCRDsFile]; !ok {
		t.Error("the served Package's template lets kapp own the chart's crds/: deleting the BundleDeployment would delete them")
	}
	if _, ok := exported.Template[1].Ytt.Inline.Paths[translate.ChartCRDsFile]; ok {
		t.Error("an exported Package, installed where no adapter creates the chart's crds/, tells kapp they exist")
	}
}
