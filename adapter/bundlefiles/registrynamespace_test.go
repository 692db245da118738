package bundlefiles

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
	"github.com/rukpak-kapp/rukpak-kapp/convert/certs"
)

func rukpakRegistryBundle(t *testing.T, name string) map[string][]byte {
	t.Helper()
	files, err := convert.ReadDir(os.DirFS(filepath.Join("..", "..", "test", "testdata", "rukpak-bundles", "registry", name)))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func fixedCerts(service, namespace string) (convert.ServingCert, error) {
	return convert.ServingCert{Serving: certs.Pair{CertPEM: []byte("cert"), KeyPEM: []byte("key")}, CABundle: []byte("ca")}, nil
}

// A BundleDeployment without an install namespace is one of rukpak's first
// API: its registry+v1 bundle goes where rukpak v0.16 put it.
func TestRegistryFiles_WithoutInstallNamespace(t *testing.T) {
	t.Parallel()
	v1alpha1 := bd("core-rukpak-io-registry", imageSource(imageRef("r/registry:valid")))
	v1alpha1.Spec.InstallNamespace = ""

	layout, err := RegistryFiles(v1alpha1, rukpakRegistryBundle(t, "valid"), fixedCerts)
	if err != nil {
		t.Fatal(err)
	}
	first := string(layout.Files[ManifestsDir+"/0000.yaml"])
	if !strings.Contains(first, "kind: Namespace") || !strings.Contains(first, "name: prometheus-system") {
		t.Fatalf("the first object is not the package's namespace:\n%s", first)
	}
	inNamespace := 0
	for name, data := range layout.Files {
		if strings.Contains(string(data), "namespace: apps") {
			t.Fatalf("%s is in another namespace:\n%s", name, data)
		}
		if strings.Contains(string(data), "namespace: prometheus-system") {
			inNamespace++
		}
	}
	if inNamespace == 0 {
		t.Fatal("no object is in the package's namespace")
	}

	_, err = RegistryFiles(v1alpha1, rukpakRegistryBundle(t, "invalid"), fixedCerts)
	var invalid *InvalidError
	if !errors.As(err, &invalid) || err.Error() != "convert registry+v1 bundle to plain+v0 bundle: AllNamespace install mode must be enabled" {
		t.Fatalf("a bundle without AllNamespaces: %v", err)
	}

	// With an install namespace, nothing changes: no Namespace object.
	v1alpha2 := bd("core-rukpak-io-registry", imageSource(imageRef("r/registry:valid")))
	layout, err = RegistryFiles(v1alpha2, rukpakRegistryBundle(t, "valid"), fixedCerts)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range layout.Files {
		if strings.Contains(string(data), "kind: Namespace\n") {
			t.Fatalf("%s: a Namespace object for a v1alpha2 BundleDeployment:\n%s", name, data)
		}
	}
}

func imageRef(ref string) rukpakv1alpha2.ImageSource { return rukpakv1alpha2.ImageSource{Ref: ref} }
