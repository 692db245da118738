package translate

import (
	"errors"
	"strings"
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

var cfg = Config{SystemNamespace: "rukpak-system", ServiceAccountName: "installer", SyncPeriod: 10 * time.Minute}

func bd(class string, src rukpakv1alpha2.BundleSource) *rukpakv1alpha2.BundleDeployment {
	return &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "my-bd", UID: "uid-1"},
		Spec:       rukpakv1alpha2.BundleDeploymentSpec{InstallNamespace: "apps", ProvisionerClassName: class, Source: src},
	}
}

func imageSource(img rukpakv1alpha2.ImageSource) rukpakv1alpha2.BundleSource {
	return rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &img}
}

func wantApp(fetch kappctrlv1alpha1.AppFetch) *kappctrlv1alpha1.App {
	yes := true
	return &kappctrlv1alpha1.App{
		TypeMeta: metav1.TypeMeta{APIVersion: "kappctrl.k14s.io/v1alpha1", Kind: "App"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "my-bd", Namespace: "rukpak-system",
			Labels:      map[string]string{"core.rukpak.io/owner-kind": "BundleDeployment", "core.rukpak.io/owner-name": "my-bd"},
			Annotations: map[string]string{"core.rukpak.io/bundle-generation": "0"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "core.rukpak.io/v1alpha2", Kind: "BundleDeployment", Name: "my-bd", UID: "uid-1",
				Controller: &yes, BlockOwnerDeletion: &yes,
			}},
			Finalizers: []string{"finalizers.kapp-ctrl.k14s.io/delete"},
		},
		Spec: kappctrlv1alpha1.AppSpec{
			ServiceAccountName: "installer",
			// 10 minutes spread by the name "my-bd".
			SyncPeriod:       &metav1.Duration{Duration: 10*time.Minute + 34*time.Second},
			DefaultNamespace: "apps",
			Fetch:            []kappctrlv1alpha1.AppFetch{fetch},
			Template: []kappctrlv1alpha1.AppTemplate{{Ytt: &kappctrlv1alpha1.AppTemplateYtt{
				Paths: []string{"manifests"}, FileMarks: []string{"**/*:type=yaml-plain"},
				Inline: &kappctrlv1alpha1.AppFetchInline{Paths: map[string]string{
					"rukpak-kapp-owner-labels.yml": "apiVersion: kapp.k14s.io/v1alpha1\nkind: Config\nadditionalLabels:\n  core.rukpak.io/owner-kind: BundleDeployment\n  core.rukpak.io/owner-name: \"my-bd\"\n" + crdsFirst,
				}},
			}}},
			Deploy: []kappctrlv1alpha1.AppDeploy{{Kapp: &kappctrlv1alpha1.AppDeployKapp{
				RawOptions: []string{"--wait-check-interval=250ms", "--app-changes-max-to-keep=0", "--logs=false"},
			}}},
		},
	}
}

func TestApp_Plain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		bd   *rukpakv1alpha2.BundleDeployment
		want *kappctrlv1alpha1.App
	}{
		{
			name: "public image",
			bd:   bd(rukpakv1alpha2.ClassPlain, imageSource(rukpakv1alpha2.ImageSource{Ref: "reg.example/b:v1"})),
			want: wantApp(kappctrlv1alpha1.AppFetch{Image: &kappctrlv1alpha1.AppFetchImage{URL: "reg.example/b:v1"}}),
		},
		{
			name: "configMaps become inline configMap references under their paths",
			bd: bd(rukpakv1alpha2.ClassPlain, rukpakv1alpha2.BundleSource{Type: "configMaps", ConfigMaps: []rukpakv1alpha2.ConfigMapSource{
				{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: "part-1"}, Path: "manifests"},
				{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: "part-2"}, Path: "./manifests/"},
				{ConfigMap: rukpakv1alpha2.LocalObjectReference{Name: "root"}},
			}}),
			want: wantApp(kappctrlv1alpha1.AppFetch{Inline: &kappctrlv1alpha1.AppFetchInline{PathsFrom: []kappctrlv1alpha1.AppFetchInlineSource{
				{ConfigMapRef: &kappctrlv1alpha1.AppFetchInlineSourceRef{Name: "part-1", DirectoryPath: "manifests"}},
				{ConfigMapRef: &kappctrlv1alpha1.AppFetchInlineSourceRef{Name: "part-2", DirectoryPath: "manifests"}},
				{ConfigMapRef: &kappctrlv1alpha1.AppFetchInlineSourceRef{Name: "root"}},
			}}}),
		},
		{
			name: "http with basic auth references the user's Secret",
			bd: bd(rukpakv1alpha2.ClassPlain, rukpakv1alpha2.BundleSource{Type: "http", HTTP: &rukpakv1alpha2.HTTPSource{
				URL: "https://files.example/b.tgz", Auth: rukpakv1alpha2.Authorization{Secret: rukpakv1alpha2.LocalObjectReference{Name: "basic"}},
			}}),
			want: wantApp(kappctrlv1alpha1.AppFetch{HTTP: &kappctrlv1alpha1.AppFetchHTTP{
				URL: "https://files.example/b.tgz", SecretRef: &kappctrlv1alpha1.AppFetchLocalRef{Name: "basic"},
			}}),
		},
		{
			name: "git branch, directory and auth",
			bd: bd(rukpakv1alpha2.ClassPlain, rukpakv1alpha2.BundleSource{Type: "git", Git: &rukpakv1alpha2.GitSource{
				Repository: "https://git.example/r.git", Directory: "./dev/deploy/", Ref: rukpakv1alpha2.GitRef{Branch: "main"},
				Auth: rukpakv1alpha2.Authorization{Secret: rukpakv1alpha2.LocalObjectReference{Name: "git-auth"}},
			}}),
			want: wantApp(kappctrlv1alpha1.AppFetch{Git: &kappctrlv1alpha1.AppFetchGit{
				URL: "https://git.example/r.git", Ref: "origin/main", SubPath: "dev/deploy", SecretRef: &kappctrlv1alpha1.AppFetchLocalRef{Name: "git-auth"},
			}}),
		},
		{
			name: "git tag at the repository root",
			bd: bd(rukpakv1alpha2.ClassPlain, rukpakv1alpha2.BundleSource{Type: "git", Git: &rukpakv1alpha2.GitSource{
				Repository: "https://git.example/r.git", Ref: rukpakv1alpha2.GitRef{Tag: "v0.0.1"},
			}}),
			want: wantApp(kappctrlv1alpha1.AppFetch{Git: &kappctrlv1alpha1.AppFetchGit{URL: "https://git.example/r.git", Ref: "v0.0.1"}}),
		},
		{
			name: "private image keeps its pull secret",
			bd:   bd(rukpakv1alpha2.ClassPlain, imageSource(rukpakv1alpha2.ImageSource{Ref: "reg.example/b@sha256:abc", ImagePullSecretName: "pull"})),
			want: wantApp(kappctrlv1alpha1.AppFetch{Image: &kappctrlv1alpha1.AppFetchImage{
				URL: "reg.example/b@sha256:abc", SecretRef: &kappctrlv1alpha1.AppFetchLocalRef{Name: "pull"},
			}}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := App(tt.bd, cfg, nil)
			if err != nil {
				t.Fatalf("App: %v", err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("App mismatch (-want +got):\n%s", d)
			}
		})
	}
}

func TestApp_Unsupported(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		bd      *rukpakv1alpha2.BundleDeployment
		wantMsg string
	}{
		{"unknown class", bd("other-class", imageSource(rukpakv1alpha2.ImageSource{Ref: "r/b:v1"})), `provisioner class "other-class" is not supported yet`},
		{"configMaps type without configMaps", bd(rukpakv1alpha2.ClassPlain, rukpakv1alpha2.BundleSource{Type: "configMaps"}), `spec.source.configMaps must be set`},
		{"git without a ref", bd(rukpakv1alpha2.ClassPlain, rukpakv1alpha2.BundleSource{Type: "git", Git: &rukpakv1alpha2.GitSource{Repository: "https://x"}}), `must name a branch, a tag or a commit`},
		{"image type without image", bd(rukpakv1alpha2.ClassPlain, rukpakv1alpha2.BundleSource{Type: "image"}), `spec.source.image must be set`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := App(tt.bd, cfg, nil)
			var unsupported *UnsupportedError
			if !errors.As(err, &unsupported) {
				t.Fatalf("want UnsupportedError, got %v", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("message %q does not contain %q", err, tt.wantMsg)
			}
		})
	}
}

func TestApp_AdapterFetchedContent(t *testing.T) {
	t.Parallel()
	b := bd(rukpakv1alpha2.ClassPlain, imageSource(rukpakv1alpha2.ImageSource{Ref: "r/b:v1", CertificateData: "PEM"}))
	if !bundlefiles.AdapterFetches(b) {
		t.Fatal("an image with its own CA must be fetched by the adapter")
	}
	got, err := App(b, cfg, &Packed{Secrets: []ContentSecret{{Name: "my-bd-content-a", Dir: "manifests"}, {Name: "my-bd-content-b", Dir: "."}}})
	if err != nil {
		t.Fatalf("App: %v", err)
	}
	want := wantApp(kappctrlv1alpha1.AppFetch{Inline: &kappctrlv1alpha1.AppFetchInline{PathsFrom: []kappctrlv1alpha1.AppFetchInlineSource{
		{SecretRef: &kappctrlv1alpha1.AppFetchInlineSourceRef{Name: "my-bd-content-a", DirectoryPath: "manifests"}},
		{SecretRef: &kappctrlv1alpha1.AppFetchInlineSourceRef{Name: "my-bd-content-b"}},
	}}})
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("App mismatch (-want +got):\n%s", d)
	}
}

func TestApp_ServiceAccountAnnotation(t *testing.T) {
	t.Parallel()
	b := bd(rukpakv1alpha2.ClassPlain, imageSource(rukpakv1alpha2.ImageSource{Ref: "r/b:v1"}))
	b.Annotations = map[string]string{rukpakv1alpha2.AnnotationServiceAccount: "tenant-installer"}
	got, err := App(b, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.ServiceAccountName != "tenant-installer" {
		t.Errorf("ServiceAccountName = %q", got.Spec.ServiceAccountName)
	}
	b.Annotations[rukpakv1alpha2.AnnotationServiceAccount] = "Not A Name"
	var unsupported *UnsupportedError
	if _, err := App(b, cfg, nil); !errors.As(err, &unsupported) || !strings.Contains(err.Error(), "is not a ServiceAccount name") {
		t.Errorf("want a clear error for a bad name, got %v", err)
	}
}

func TestApp_SyncPeriod(t *testing.T) {
	t.Parallel()
	withBranch := Config{SystemNamespace: "rukpak-system", ServiceAccountName: "installer", SyncPeriod: 10 * time.Minute, BranchSyncPeriod: time.Minute}
	branch := rukpakv1alpha2.BundleSource{Type: "git", Git: &rukpakv1alpha2.GitSource{Repository: "https://x", Ref: rukpakv1alpha2.GitRef{Branch: "main"}}}
	tag := rukpakv1alpha2.BundleSource{Type: "git", Git: &rukpakv1alpha2.GitSource{Repository: "https://x", Ref: rukpakv1alpha2.GitRef{Tag: "v1"}}}
	annotated := func(b *rukpakv1alpha2.BundleDeployment, v string) *rukpakv1alpha2.BundleDeployment {
		b.Annotations = map[string]string{rukpakv1alpha2.AnnotationSyncPeriod: v}
		return b
	}
	tests := []struct {
		name    string
		bd      *rukpakv1alpha2.BundleDeployment
		content *Packed
		want    time.Duration
		wantErr string
	}{
		{"default, spread by the name", bd(rukpakv1alpha2.ClassPlain, tag), nil, 10*time.Minute + 34*time.Second, ""},
		{"kapp-controller follows a branch", bd(rukpakv1alpha2.ClassPlain, branch), nil, time.Minute + 4*time.Second, ""},
		{"the adapter follows the branch itself", bd(rukpakv1alpha2.ClassPlain, branch), &Packed{}, 10*time.Minute + 34*time.Second, ""},
		{"asked for by annotation", annotated(bd(rukpakv1alpha2.ClassPlain, tag), "45s"), nil, 45 * time.Second, ""},
		{"annotation wins over the branch period", annotated(bd(rukpakv1alpha2.ClassPlain, branch), "1h"), nil, time.Hour, ""},
		{"annotation not a duration", annotated(bd(rukpakv1alpha2.ClassPlain, tag), "often"), nil, 0, `"often" is not a positive duration`},
		{"annotation negative", annotated(bd(rukpakv1alpha2.ClassPlain, tag), "-1m"), nil, 0, "not a positive duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := App(tt.bd, withBranch, tt.content)
			if tt.wantErr != "" {
				var unsupported *UnsupportedError
				if !errors.As(err, &unsupported) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want UnsupportedError containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("App: %v", err)
			}
			if got.Spec.SyncPeriod.Duration != tt.want {
				t.Errorf("sync period = %v, want %v", got.Spec.SyncPeriod.Duration, tt.want)
			}
		})
	}
}

// The App records what it was made from, so a restarted adapter and other
// BundleDeployments' dependencies can read it back.
func TestApp_RecordsWhatItWasMadeFrom(t *testing.T) {
	t.Parallel()
	b := bd(rukpakv1alpha2.ClassRegistry, imageSource(rukpakv1alpha2.ImageSource{Ref: "r/b:v1"}))
	b.Generation = 7
	resolved := &rukpakv1alpha2.BundleSource{Type: "image", Image: &rukpakv1alpha2.ImageSource{Ref: "r/b@sha256:00"}}
	meta := &BundleMetadata{Package: convert.Package{Name: "p", Version: "1.2.3"}, Labels: []string{"l"}, Notes: []string{"n"}}
	got, err := App(b, cfg, &Packed{Secrets: []ContentSecret{{Name: "s", Dir: "manifests"}}, Resolved: resolved, Bundle: meta})
	if err != nil {
		t.Fatalf("App: %v", err)
	}
	want := map[string]string{
		"core.rukpak.io/bundle-generation": "7",
		"core.rukpak.io/resolved-source":   `{"type":"image","image":{"ref":"r/b@sha256:00"}}`,
		"core.rukpak.io/bundle-metadata":   `{"package":{"name":"p","version":"1.2.3"},"labels":["l"],"notes":["n"]}`,
	}
	if d := cmp.Diff(want, got.Annotations); d != "" {
		t.Errorf("annotations (-want +got):\n%s", d)
	}
}
