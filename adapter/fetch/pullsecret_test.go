package fetch

import (
	"encoding/base64"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
)

// A pull secret's keys are matched to registries as the kubelet matches
// them: the key `kubectl create secret docker-registry` writes for Docker
// Hub (https://index.docker.io/v1/), a URL with a scheme and a path, a host
// with a port, and a glob.
func TestPullSecretKeys(t *testing.T) {
	t.Parallel()
	auth := func(user string) string {
		return `{"auth":"` + base64.StdEncoding.EncodeToString([]byte(user+":pw")) + `"}`
	}
	secret := []byte(`{"auths":{` +
		`"https://index.docker.io/v1/":` + auth("hub") + `,` +
		`"https://quay.example.com/v2/":` + auth("quay") + `,` +
		`"registry.example.com:5000":` + auth("port") + `,` +
		`"*.glob.example.com":` + auth("glob") + `}}`)
	k, err := keychainFrom(ImageOptions{DockerConfigJSON: secret})
	if err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]string{
		"busybox:latest":                       "hub",
		"docker.io/library/busybox:1":          "hub",
		"index.docker.io/someone/image:1":      "hub",
		"quay.example.com/org/catalog:v4":      "quay",
		"registry.example.com:5000/catalog:v1": "port",
		"mirror.glob.example.com/catalog:v1":   "glob",
		"elsewhere.example.com/catalog:v1":     "",
		"registry.example.com/catalog:no-port": "",
	} {
		r, err := name.ParseReference(ref)
		if err != nil {
			t.Fatal(err)
		}
		a, err := k.Resolve(r.Context())
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		cfg, err := a.Authorization()
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		if got := cfg.Username; got != want {
			t.Errorf("%s: credentials of %q, want %q", ref, got, want)
		}
	}
	if a, _ := k.Resolve(name.MustParseReference("ghcr.io/x/y:1").Context()); a != authn.Anonymous {
		cfg, _ := a.Authorization()
		if cfg.Username != "" || cfg.Auth != "" {
			t.Errorf("a registry the secret does not name got credentials %+v", cfg)
		}
	}
	if _, err := keychainFrom(ImageOptions{DockerConfigJSON: []byte(`{"auths":{}}`)}); err == nil {
		t.Error("a pull secret that names no registry was taken")
	}
}
