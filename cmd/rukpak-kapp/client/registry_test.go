package client

import (
	"context"
	"io"
	"io/fs"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/registry"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/ocibundle"
)

// askedKeychain is a keychain that remembers which repositories it was
// asked for, and gives no credentials.
type askedKeychain struct {
	mu    sync.Mutex
	asked []string
}

func (k *askedKeychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.asked = append(k.asked, target.String())
	return authn.Anonymous, nil
}

// times says how often the keychain was asked for repo.
func (k *askedKeychain) times(repo string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for _, a := range k.asked {
		if a == repo {
			n++
		}
	}
	return n
}

// A push, a pull, a digest lookup and render's fetch of the CLI all take
// their credentials from registryKeychain. Not parallel: it stands in for
// registryKeychain, which the parallel tests read once it is done.
func TestRegistryRequestsTakeTheCLIKeychain(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	repo := strings.TrimPrefix(srv.URL, "http://") + "/operators"
	keychain := &askedKeychain{}
	saved := registryKeychain
	registryKeychain = keychain
	t.Cleanup(func() { registryKeychain = saved })
	ctx := context.Background()

	img, err := ocibundle.Bundle(map[string][]byte{"packages/a.yml": []byte("a: 1\n"), ocibundle.ImagesLockPath: ocibundle.ImagesLock()}, ocibundle.BundleOptions{Created: pushedAt})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func() error
	}{
		{"push", func() error { _, err := pushImage(ctx, repo, "v1", img); return err }},
		{"pull", func() error {
			_, err := fetch.FetchImage(ctx, repo+":v1", registryOptions(), fetch.DefaultLimits, nil)
			return err
		}},
		{"digest lookup", func() error { _, err := digestOf(ctx, repo+":v1", registryOptions()); return err }},
		// render fetches a registry+v1 bundle as the adapter would (kapp-
		// controller fetches a plain one); the image is no registry+v1
		// bundle, so only the pull is what this step looks at.
		{"render's fetch", func() error {
			bd := &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: rukpakv1alpha2.BundleDeploymentSpec{
				ProvisionerClassName: rukpakv1alpha2.ClassRegistry, InstallNamespace: "default",
				Source: rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: repo + ":v1"}}}}
			_, _ = Render(ctx, bd, translate.Config{SystemNamespace: "rukpak-system"})
			return nil
		}},
	}
	for _, step := range steps {
		before := keychain.times(repo)
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if keychain.times(repo) == before {
			t.Errorf("the %s did not ask registryKeychain for %s (asked: %v)", step.name, repo, keychain.asked)
		}
	}
}

// No file of the CLI (cmd/rukpak-kapp and every package below it) but
// client/registry.go picks credentials or reaches a registry on its own:
// the keychain is chosen in one place, and no docker config is read by
// hand.
func TestOneKeychain(t *testing.T) {
	t.Parallel()
	var files []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		files = append(files, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, filepath.Join("..", "cmd", "render.go")) {
		t.Fatalf("the walk of the CLI's files misses cmd/render.go: %v", files)
	}
	for _, file := range files {
		if file == filepath.Join("..", "client", "registry.go") {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, own := range []string{"go-containerregistry/pkg/authn", "go-containerregistry/pkg/v1/remote", "ocibundle.Push(", "fetch.ImageOptions{", `"DOCKER_CONFIG"`, "DockerConfigJSON"} {
			if strings.Contains(string(data), own) {
				t.Errorf("%s uses %s: take registryOptions or pushImage (client/registry.go) instead", file, own)
			}
		}
	}
}
