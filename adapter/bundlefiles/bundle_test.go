package bundlefiles

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func bd(class string, src rukpakv1alpha2.BundleSource) *rukpakv1alpha2.BundleDeployment {
	return &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "my-bd", UID: "uid-1"},
		Spec:       rukpakv1alpha2.BundleDeploymentSpec{InstallNamespace: "apps", ProvisionerClassName: class, Source: src},
	}
}

func imageSource(img rukpakv1alpha2.ImageSource) rukpakv1alpha2.BundleSource {
	return rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &img}
}

func TestAdapterFetches(t *testing.T) {
	t.Parallel()
	skip := rukpakv1alpha2.Authorization{InsecureSkipVerify: true}
	httpSrc := func(a rukpakv1alpha2.Authorization) rukpakv1alpha2.BundleSource {
		return rukpakv1alpha2.BundleSource{Type: "http", HTTP: &rukpakv1alpha2.HTTPSource{URL: "https://x/b.tgz", Auth: a}}
	}
	gitSrc := func(a rukpakv1alpha2.Authorization) rukpakv1alpha2.BundleSource {
		return rukpakv1alpha2.BundleSource{Type: "git", Git: &rukpakv1alpha2.GitSource{Repository: "https://x", Ref: rukpakv1alpha2.GitRef{Branch: "main"}, Auth: a}}
	}
	tests := []struct {
		name string
		bd   *rukpakv1alpha2.BundleDeployment
		want bool
	}{
		{"plain image", bd(rukpakv1alpha2.ClassPlain, imageSource(rukpakv1alpha2.ImageSource{Ref: "r/b:v1"})), false},
		{"plain image with pull secret", bd(rukpakv1alpha2.ClassPlain, imageSource(rukpakv1alpha2.ImageSource{Ref: "r/b:v1", ImagePullSecretName: "s"})), false},
		{"plain image with its own CA", bd(rukpakv1alpha2.ClassPlain, imageSource(rukpakv1alpha2.ImageSource{Ref: "r/b:v1", CertificateData: "PEM"})), true},
		{"plain image skipping verification", bd(rukpakv1alpha2.ClassPlain, imageSource(rukpakv1alpha2.ImageSource{Ref: "r/b:v1", InsecureSkipTLSVerify: true})), true},
		{"plain image on localhost without a port", bd(rukpakv1alpha2.ClassPlain, imageSource(rukpakv1alpha2.ImageSource{Ref: "localhost/testdata/plain:v0.1.0"})), true},
		{"plain image on localhost with a port", bd(rukpakv1alpha2.ClassPlain, imageSource(rukpakv1alpha2.ImageSource{Ref: "localhost:5000/plain:v0.1.0"})), false},
		{"plain image of a repository named localhost", bd(rukpakv1alpha2.ClassPlain, imageSource(rukpakv1alpha2.ImageSource{Ref: "localhost:v1"})), false},
		{"plain http", bd(rukpakv1alpha2.ClassPlain, httpSrc(rukpakv1alpha2.Authorization{})), false},
		{"plain http skipping verification", bd(rukpakv1alpha2.ClassPlain, httpSrc(skip)), true},
		{"plain git", bd(rukpakv1alpha2.ClassPlain, gitSrc(rukpakv1alpha2.Authorization{})), false},
		{"plain git skipping verification", bd(rukpakv1alpha2.ClassPlain, gitSrc(skip)), true},
		{"helm from any source", bd(rukpakv1alpha2.ClassHelm, httpSrc(rukpakv1alpha2.Authorization{})), true},
		{"another class never downloads", bd("other-class", imageSource(rukpakv1alpha2.ImageSource{Ref: "r/b:v1", CertificateData: "PEM"})), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := AdapterFetches(tt.bd); got != tt.want {
				t.Errorf("AdapterFetches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPlainFiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		files   map[string][]byte
		want    []string
		wantErr string
	}{
		{"manifests kept, the rest dropped", map[string][]byte{"manifests/": nil, "manifests/a.yaml": []byte("a"), "README": []byte("r")}, []string{"manifests/a.yaml"}, ""},
		{"no manifests directory", map[string][]byte{"emptyfile": nil}, nil, "readdir manifests: file does not exist"},
		{"empty manifests directory", map[string][]byte{"manifests/": nil}, nil, "found zero objects"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := PlainFiles(tt.files)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("want error containing %q, got %v", tt.wantErr, err)
				}
				return
			}
			var names []string
			for n := range got {
				names = append(names, n)
			}
			if d := cmp.Diff(tt.want, names); d != "" {
				t.Errorf("files (-want +got):\n%s", d)
			}
		})
	}
}

func TestCheckPlainObjects(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		want  string
	}{
		{"objects", map[string][]byte{"manifests/a.yaml": []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n# nothing\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n"),
			"manifests/b.json": []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`)}, ""},
		// rukpak's test bundle plain-v0:subdir, flattened into a ConfigMap.
		{"a .gitignore", map[string][]byte{"manifests/namespace-a.yaml": []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"), "manifests/.gitignore": []byte("!.gitignore\n")},
			"get objects from bundle manifests: manifests/.gitignore: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go value of type map[string]interface {}"},
		{"a list", map[string][]byte{"manifests/a.yaml": []byte("- a\n- b\n")}, "json: cannot unmarshal array into Go value"},
		{"no kind", map[string][]byte{"manifests/a.yaml": []byte("apiVersion: v1\nkind: Namespace\n---\napiVersion: v1\nmetadata: {name: x}\n")},
			"manifests/a.yaml: document 2 is not an object: it has no apiVersion or no kind"},
		{"only comments", map[string][]byte{"manifests/a.yaml": []byte("# nothing here\n---\n")}, ZeroObjects},
		{"broken YAML", map[string][]byte{"manifests/a.yaml": []byte("a: [\n")}, "get objects from bundle manifests: manifests/a.yaml:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPlainObjects(tc.files)
			var invalid *InvalidError
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, &invalid)):
				t.Fatalf("got %v, want an InvalidError with %q", err, tc.want)
			}
		})
	}
}
