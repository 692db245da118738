package fetch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// The CLI's pulls read the user's credentials as its pushes (and docker,
// and imgpkg) do, through a credential helper too; the adapter's never
// do: without a pull secret a fetch is anonymous.
func TestImageKeychain(t *testing.T) {
	reg, err := harness.StartRegistry("robot", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Stop)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "manifests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifests", "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ref, _, err := reg.PushDir(dir, "private/bundle:v1")
	if err != nil {
		t.Fatal(err)
	}

	// A docker config that names a credential helper for the registry, and
	// the helper, as docker-credential-NAME on the PATH.
	home := t.TempDir()
	config := fmt.Sprintf(`{"credHelpers": {%q: "rukpaktest"}}`, reg.Host)
	if err := os.WriteFile(filepath.Join(home, "config.json"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	helper := "#!/bin/sh\nread server\necho '{\"ServerURL\":\"'$server'\",\"Username\":\"robot\",\"Secret\":\"s3cret\"}'\n"
	if err := os.WriteFile(filepath.Join(home, "docker-credential-rukpaktest"), []byte(helper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", home)
	t.Setenv("PATH", home+string(os.PathListSeparator)+os.Getenv("PATH"))

	if _, err := FetchImage(context.Background(), ref, ImageOptions{Keychain: authn.DefaultKeychain}, DefaultLimits, nil); err != nil {
		t.Errorf("with the user's keychain: %v", err)
	}
	_, err = FetchImage(context.Background(), ref, ImageOptions{}, DefaultLimits, nil)
	if err == nil || !strings.Contains(err.Error(), "UNAUTHORIZED") || errors.Is(err, ErrInvalidContent) {
		t.Errorf("without a pull secret, the adapter's fetch must be anonymous: %v", err)
	}
}
