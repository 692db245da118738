package offline

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/tarball"
)

// exportCfg is the installer account and sync period the exported Apps get.
var exportCfg = translate.Config{SystemNamespace: "rukpak-system", ServiceAccountName: "installer", SyncPeriod: 10 * time.Minute}

// tarServer is a TLS server on loopback handing out a gzipped tar of files.
func tarServer(t *testing.T, files map[string]string) *httptest.Server {
	t.Helper()
	body := tarball.Of(t, files)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
	t.Cleanup(srv.Close)
	return srv
}

// exportedBD is a BundleDeployment of class fetching url over HTTPS that
// only it trusts (insecureSkipVerify), so kapp-controller could not fetch
// it for a Package.
func exportedBD(class, url string) *rukpakv1alpha2.BundleDeployment {
	return &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: rukpakv1alpha2.BundleDeploymentSpec{ProvisionerClassName: class, InstallNamespace: "apps",
			Source: rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP,
				HTTP: &rukpakv1alpha2.HTTPSource{URL: url, Auth: rukpakv1alpha2.Authorization{InsecureSkipVerify: true}}}},
	}
}

// exported are the objects of kinds T that x holds.
func exported[T client.Object](x *PackageExport) []T {
	var out []T
	for _, o := range x.Objects {
		if t, ok := o.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

func TestRenderPackagePlainInline(t *testing.T) {
	t.Parallel()
	srv := tarServer(t, map[string]string{"manifests/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n"})
	x, err := RenderPackage(context.Background(), exportedBD(rukpakv1alpha2.ClassPlain, srv.URL+"/web.tgz"),
		PackageOptions{Config: exportCfg, Namespace: "catalog", Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	pkgs, metas, installs := exported[*datav1alpha1.Package](x), exported[*datav1alpha1.PackageMetadata](x), exported[*packagingv1alpha1.PackageInstall](x)
	if len(pkgs) != 1 || len(metas) != 1 || len(installs) != 1 {
		t.Fatalf("objects %v", x.Objects)
	}
	pkg := pkgs[0]
	if !strings.HasPrefix(pkg.Spec.Version, "0.0.0-") || pkg.Namespace != "catalog" || metas[0].Spec.DisplayName != "web" {
		t.Errorf("Package %s version %s in %s, metadata %+v", pkg.Name, pkg.Spec.Version, pkg.Namespace, metas[0].Spec)
	}
	// Only the adapter trusts the server: the content travels inline.
	fetch := pkg.Spec.Template.Spec.Fetch
	if len(fetch) != 1 || fetch[0].Inline == nil || !strings.Contains(fetch[0].Inline.Paths["manifests/cm.yaml"], "name: settings") {
		t.Fatalf("fetch %+v, want the manifests inline", fetch)
	}
	if len(x.Notes) != 1 || !strings.Contains(x.Notes[0], "made from the content's digest") {
		t.Errorf("notes %q, want the one about a digest version", x.Notes)
	}
}

func TestRenderPackageChartWithValuesAndPush(t *testing.T) {
	t.Parallel()
	srv := tarServer(t, map[string]string{
		"hello/Chart.yaml":         "apiVersion: v2\nname: hello\nversion: 0.3.1\ndescription: says hello\n",
		"hello/values.yaml":        "greeting: hi\n",
		"hello/values.schema.json": `{"type":"object","properties":{"greeting":{"type":"string"}}}`,
		"hello/templates/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hello\ndata:\n  greeting: {{ .Values.greeting }}\n",
	})
	bd := exportedBD(rukpakv1alpha2.ClassHelm, srv.URL+"/hello.tgz")
	bd.Spec.Config = &apiextensionsv1.JSON{Raw: []byte(`{"values":"greeting: hello from the BundleDeployment\n"}`)}
	var pushed map[string][]byte
	var pushedTag string
	x, err := RenderPackage(context.Background(), bd, PackageOptions{Config: exportCfg, Namespace: "catalog", Now: time.Now(),
		Push: func(_ context.Context, files map[string][]byte, tag string) (string, error) {
			pushed, pushedTag = files, tag
			return "registry.example/hello@sha256:0123", nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	pkg := exported[*datav1alpha1.Package](x)[0]
	if pkg.Spec.Version != "0.3.1" || pushedTag != "0.3.1" {
		t.Errorf("version %s, pushed as %s; want the chart's 0.3.1", pkg.Spec.Version, pushedTag)
	}
	if len(pkg.Spec.ValuesSchema.OpenAPIv3.Raw) == 0 {
		t.Error("the chart's values schema is not the Package's")
	}
	if f := pkg.Spec.Template.Spec.Fetch; len(f) != 1 || f[0].ImgpkgBundle == nil || f[0].ImgpkgBundle.Image != "registry.example/hello@sha256:0123" {
		t.Fatalf("fetch %+v, want the pushed bundle", f)
	}
	if _, ok := pushed[bundlefiles.ValuesFile]; ok {
		t.Error("the values were pushed with the content; they travel in the values Secret")
	}
	secrets := exported[*corev1.Secret](x)
	if len(secrets) != 1 || !strings.Contains(string(secrets[0].Data["values.yaml"])+secrets[0].StringData["values.yaml"], "hello from the BundleDeployment") {
		t.Fatalf("values Secrets %+v", secrets)
	}
}
