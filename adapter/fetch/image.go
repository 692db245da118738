package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/google/go-containerregistry/pkg/authn"
	kauth "github.com/google/go-containerregistry/pkg/authn/kubernetes"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	corev1 "k8s.io/api/core/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch/unpack"
)

// ImageOptions say how to reach a registry.
type ImageOptions struct {
	// DockerConfigJSON is the content of a kubernetes.io/dockerconfigjson Secret.
	DockerConfigJSON []byte
	// Keychain, when set, gives the credentials instead: the CLI's is the
	// user's own (authn.DefaultKeychain, credential helpers included), as
	// its pushes use. The adapter never sets it: it reads only the pull
	// Secret a user named.
	Keychain authn.Keychain
	// CAData is PEM trusted in addition to the system roots, for this fetch only.
	CAData string
	// InsecureSkipTLSVerify skips certificate verification, for this fetch only.
	InsecureSkipTLSVerify bool
	// Network is kapp-controller-config's CAs, proxies and hosts not
	// verified; nil: the environment's.
	Network *Network
}

// Image is a fetched image: its files, the reference pinned by digest, and
// the labels of its configuration (a catalog image names where its catalog
// is in one).
type Image struct {
	Files  Files
	Pinned string
	Labels map[string]string
}

// FetchImage pulls ref and unpacks its flattened file system (whiteouts
// applied) within limits.
// A non-nil cache skips the layer download for a digest already unpacked.
func FetchImage(ctx context.Context, ref string, opts ImageOptions, limits Limits, cache *DigestCache) (*Image, error) {
	parsed, img, err := remoteImage(ctx, ref, opts)
	if err != nil {
		return nil, err
	}
	digest, err := img.Digest()
	if err != nil {
		return nil, fmt.Errorf("read image digest: %w", err)
	}
	pinned := parsed.Context().Name() + "@" + digest.String()
	config, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read image configuration: %w", err)
	}
	labels := config.Config.Labels
	if files, ok := cache.get(digest.String()); ok {
		return &Image{Files: files, Pinned: pinned, Labels: labels}, nil
	}
	checked, err := checkedLayers(img, limits)
	if err != nil {
		return nil, fmt.Errorf("error unpacking image: %w", err)
	}
	rc := mutate.Extract(checked)
	defer rc.Close()
	files, err := ExtractTar(rc, limits)
	if err != nil {
		return nil, fmt.Errorf("error unpacking image: %w", err)
	}
	cache.put(digest.String(), files)
	return &Image{Files: files, Pinned: pinned, Labels: labels}, nil
}

// remoteImage is ref in its registry, reached and authenticated as opts
// say; its layers are read when asked for.
func remoteImage(ctx context.Context, ref string, opts ImageOptions) (name.Reference, v1.Image, error) {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: parse image reference %q: %v", ErrInvalidContent, ref, err)
	}
	transport, err := transportFor(opts, parsed.Context().RegistryStr())
	if err != nil {
		return nil, nil, err
	}
	keychain, err := keychainFrom(opts)
	if err != nil {
		return nil, nil, err
	}
	img, err := remote.Image(parsed, remote.WithContext(ctx), remote.WithTransport(transport), remote.WithAuthFromKeychain(keychain))
	if err != nil {
		return nil, nil, fmt.Errorf("error fetching image descriptor: %w", err)
	}
	return parsed, img, nil
}

func transportFor(opts ImageOptions, registry string) (http.RoundTripper, error) {
	t, err := opts.Network.transport(registry, opts.CAData, opts.InsecureSkipTLSVerify, true)
	if err != nil {
		return nil, fmt.Errorf("reach %s: %w", registry, err)
	}
	return t, nil
}

// dockerConfig is the part of a .dockerconfigjson that names credentials.
type dockerConfig struct {
	Auths map[string]authn.AuthConfig `json:"auths"`
}

// keychainFrom is the keychain of opts: the caller's, or the pull secret's
// credentials matched to a registry as the kubelet matches them (a key may
// be a host, a URL with a scheme and a path such as Docker Hub's
// https://index.docker.io/v1/, or a glob), or anonymous.
func keychainFrom(opts ImageOptions) (authn.Keychain, error) {
	if opts.Keychain != nil {
		return opts.Keychain, nil
	}
	data := opts.DockerConfigJSON
	if len(data) == 0 {
		// No pull secret means anonymous, never the adapter's own credentials.
		return authn.NewMultiKeychain(), nil
	}
	var cfg dockerConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("%w: pull secret is not a valid .dockerconfigjson: %v", ErrInvalidContent, err)
	}
	if len(cfg.Auths) == 0 {
		return nil, errors.New("pull secret names no registry")
	}
	secret := corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: data}}
	k, err := kauth.NewFromPullSecrets(context.Background(), []corev1.Secret{secret})
	if err != nil {
		return nil, fmt.Errorf("%w: pull secret: %v", ErrInvalidContent, err)
	}
	return k, nil
}

// checkedLayers downloads every layer once, into memory and within limits,
// and refuses a layer with an entry that leaves the root, a link that points
// outside or an oversized file. The flattening that follows
// (mutate.Extract, which applies whiteouts) silently drops such entries, so
// without this check a hostile bundle would install minus its bad parts
// instead of being refused with the reason.
func checkedLayers(img v1.Image, limits Limits) (v1.Image, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("list layers: %w", err)
	}
	var total int64
	mem := make([]v1.Layer, 0, len(layers))
	for i, l := range layers {
		rc, err := l.Compressed()
		if err != nil {
			return nil, fmt.Errorf("download layer %d: %w", i, err)
		}
		data, err := io.ReadAll(io.LimitReader(rc, limits.MaxTotalBytes-total+1))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("download layer %d: %w", i, err)
		}
		if total += int64(len(data)); total > limits.MaxTotalBytes {
			return nil, fmt.Errorf("%w: image layers are over the limit of %d bytes", ErrInvalidContent, limits.MaxTotalBytes)
		}
		ml, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
		if err != nil {
			return nil, fmt.Errorf("read layer %d: %w", i, err)
		}
		un, err := ml.Uncompressed()
		if err != nil {
			return nil, fmt.Errorf("read layer %d: %w", i, err)
		}
		err = unpack.CheckTar(un, limits)
		un.Close()
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		mem = append(mem, ml)
	}
	return mutate.AppendLayers(empty.Image, mem...)
}
