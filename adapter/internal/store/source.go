package store

import (
	"context"
	"fmt"
	"path"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Fetcher downloads what the adapter fetches itself: the seam between the
// store's decisions and registries, git and HTTP servers.
type Fetcher interface {
	// Fetch downloads bd's source and returns the files with the source
	// pinned to what was fetched (image digest, git commit).
	Fetch(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) (fetch.Files, *rukpakv1alpha2.BundleSource, error)
	// RemoteHead is the commit a tracked branch points at now.
	RemoteHead(ctx context.Context, g *rukpakv1alpha2.GitSource) (string, error)
}

// FetchTimeout bounds one fetch so a hanging registry cannot stall a worker.
const FetchTimeout = 2 * time.Minute

// SourceFetcher is the Fetcher of the real sources. It reads Secrets and
// ConfigMaps from the system namespace only.
type SourceFetcher struct {
	Reader    client.Reader
	Namespace string
	// Digests may be nil.
	Digests *fetch.DigestCache
	// Network is kapp-controller-config's say on CAs and proxies, read at
	// each fetch; nil: the environment's.
	Network *fetch.NetworkHolder
	// Keychain gives an image's credentials where the source names no pull
	// secret: the CLI's offline render sets the user's own. The adapter
	// leaves it nil: it reads only the pull Secret a user named.
	Keychain authn.Keychain
}

// Fetch downloads bd's source as the adapter does it for itself. Its errors
// are the source's.
func (r SourceFetcher) Fetch(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) (fetch.Files, *rukpakv1alpha2.BundleSource, error) {
	files, resolved, err := r.download(ctx, bd)
	if err != nil {
		return nil, nil, &scope.StepError{Step: scope.StepSource, Err: err}
	}
	return files, resolved, nil
}

// RemoteHead asks the remote of g for its branch's head.
func (r SourceFetcher) RemoteHead(ctx context.Context, g *rukpakv1alpha2.GitSource) (string, error) {
	opts, err := r.gitOptions(ctx, g)
	if err != nil {
		return "", err
	}
	cctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	return fetch.RemoteHead(cctx, opts)
}

func (r SourceFetcher) download(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) (fetch.Files, *rukpakv1alpha2.BundleSource, error) {
	src := bd.Spec.Source.DeepCopy()
	switch {
	case src.Type == rukpakv1alpha2.SourceTypeImage && src.Image != nil:
		opts := fetch.ImageOptions{CAData: src.Image.CertificateData, InsecureSkipTLSVerify: src.Image.InsecureSkipTLSVerify, Network: r.Network.Load()}
		if name := src.Image.ImagePullSecretName; name != "" {
			secret, err := r.systemSecret(ctx, "pull", name)
			if err != nil {
				return nil, nil, err
			}
			opts.DockerConfigJSON = secret.Data[corev1.DockerConfigJsonKey]
		} else {
			opts.Keychain = r.Keychain
		}
		image, err := fetch.FetchImage(ctx, src.Image.Ref, opts, fetch.DefaultLimits, r.Digests)
		if err != nil {
			return nil, nil, err
		}
		src.Image.Ref = image.Pinned
		return image.Files, src, nil
	case src.Type == rukpakv1alpha2.SourceTypeHTTP && src.HTTP != nil:
		opts := fetch.HTTPOptions{InsecureSkipVerify: src.HTTP.Auth.InsecureSkipVerify, Network: r.Network.Load()}
		if name := src.HTTP.Auth.Secret.Name; name != "" {
			secret, err := r.systemSecret(ctx, "auth", name)
			if err != nil {
				return nil, nil, err
			}
			opts.Username, opts.Password = basicAuth(secret)
		}
		files, err := fetch.FetchHTTP(ctx, src.HTTP.URL, opts, fetch.DefaultLimits)
		return files, src, err
	case src.Type == rukpakv1alpha2.SourceTypeGit && src.Git != nil:
		opts, err := r.gitOptions(ctx, src.Git)
		if err != nil {
			return nil, nil, err
		}
		tree, err := fetch.FetchGit(ctx, opts, fetch.DefaultLimits)
		if err != nil {
			return nil, nil, err
		}
		src.Git.Ref = rukpakv1alpha2.GitRef{Commit: tree.Commit}
		return tree.Files, src, nil
	case src.Type == rukpakv1alpha2.SourceTypeConfigMaps && len(src.ConfigMaps) > 0:
		files, err := r.configMapFiles(ctx, src.ConfigMaps)
		return files, src, err
	default:
		return nil, nil, fmt.Errorf("%w: source type %q has no matching source field", fetch.ErrInvalidContent, src.Type)
	}
}

func (r SourceFetcher) gitOptions(ctx context.Context, g *rukpakv1alpha2.GitSource) (fetch.GitOptions, error) {
	opts := fetch.GitOptions{
		Repository: g.Repository, Directory: g.Directory,
		Commit: g.Ref.Commit, Tag: g.Ref.Tag, Branch: g.Ref.Branch,
		InsecureSkipVerify: g.Auth.InsecureSkipVerify,
		Network:            r.Network.Load(),
	}
	if name := g.Auth.Secret.Name; name != "" {
		secret, err := r.systemSecret(ctx, "auth", name)
		if err != nil {
			return opts, err
		}
		opts.Username, opts.Password = basicAuth(secret)
		opts.SSHPrivateKey, opts.SSHKnownHosts = secret.Data["ssh-privatekey"], secret.Data["ssh-knownhosts"]
	}
	return opts, nil
}

// systemSecret reads a Secret a BD names; only the system namespace is
// ever looked at.
func (r SourceFetcher) systemSecret(ctx context.Context, role, name string) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: r.Namespace, Name: name}
	if err := r.Reader.Get(ctx, key, secret); err != nil {
		return nil, fmt.Errorf("get %s secret %s: %w", role, key, err)
	}
	return secret, nil
}

// configMapFiles assembles the bundle tree as rukpak did: every key of a
// ConfigMap becomes the file <path>/<key>.
func (r SourceFetcher) configMapFiles(ctx context.Context, sources []rukpakv1alpha2.ConfigMapSource) (fetch.Files, error) {
	files := fetch.Files{}
	for _, s := range sources {
		cm := &corev1.ConfigMap{}
		key := client.ObjectKey{Namespace: r.Namespace, Name: s.ConfigMap.Name}
		if err := r.Reader.Get(ctx, key, cm); err != nil {
			return nil, fmt.Errorf("get configmap %s: %w", key, err)
		}
		dir := path.Clean("./" + s.Path)
		for k, v := range cm.Data {
			files[path.Join(dir, k)] = []byte(v)
		}
		for k, v := range cm.BinaryData {
			files[path.Join(dir, k)] = v
		}
		for d := dir; d != "."; d = path.Dir(d) {
			files[d+"/"] = nil
		}
	}
	return files, nil
}

// basicAuth reads rukpak's basic-auth Secret layout.
func basicAuth(secret *corev1.Secret) (username, password string) {
	return string(secret.Data["username"]), string(secret.Data["password"])
}
