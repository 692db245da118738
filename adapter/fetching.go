package adapter

import (
	"context"
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// sourceFetcher downloads what the adapter fetches itself. It reads
// Secrets and ConfigMaps from the system namespace only.
type sourceFetcher struct {
	reader    client.Reader
	namespace string
	// digests may be nil.
	digests *fetch.DigestCache
}

// fetch downloads bd's source as the adapter does it for itself, and
// returns the files with the source pinned to what was fetched (image
// digest, git commit). Its errors are the source's.
func (r sourceFetcher) fetch(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) (fetch.Files, *rukpakv1alpha2.BundleSource, error) {
	files, resolved, err := r.download(ctx, bd)
	if err != nil {
		return nil, nil, &stepError{step: stepSource, err: err}
	}
	return files, resolved, nil
}

func (r sourceFetcher) download(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) (fetch.Files, *rukpakv1alpha2.BundleSource, error) {
	src := bd.Spec.Source.DeepCopy()
	switch {
	case src.Type == rukpakv1alpha2.SourceTypeImage && src.Image != nil:
		opts := fetch.ImageOptions{CAData: src.Image.CertificateData, InsecureSkipTLSVerify: src.Image.InsecureSkipTLSVerify}
		if name := src.Image.ImagePullSecretName; name != "" {
			secret, err := r.systemSecret(ctx, "pull", name)
			if err != nil {
				return nil, nil, err
			}
			opts.DockerConfigJSON = secret.Data[corev1.DockerConfigJsonKey]
		}
		image, err := fetch.FetchImage(ctx, src.Image.Ref, opts, fetch.DefaultLimits, r.digests)
		if err != nil {
			return nil, nil, err
		}
		src.Image.Ref = image.Pinned
		return image.Files, src, nil
	case src.Type == rukpakv1alpha2.SourceTypeHTTP && src.HTTP != nil:
		opts := fetch.HTTPOptions{InsecureSkipVerify: src.HTTP.Auth.InsecureSkipVerify}
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

func (r sourceFetcher) gitOptions(ctx context.Context, g *rukpakv1alpha2.GitSource) (fetch.GitOptions, error) {
	opts := fetch.GitOptions{
		Repository: g.Repository, Directory: g.Directory,
		Commit: g.Ref.Commit, Tag: g.Ref.Tag, Branch: g.Ref.Branch,
		InsecureSkipVerify: g.Auth.InsecureSkipVerify,
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
func (r sourceFetcher) systemSecret(ctx context.Context, role, name string) (*corev1.Secret, error) {
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: r.namespace, Name: name}
	if err := r.reader.Get(ctx, key, secret); err != nil {
		return nil, fmt.Errorf("get %s secret %s: %w", role, key, err)
	}
	return secret, nil
}

// configMapFiles assembles the bundle tree as rukpak did: every key of a
// ConfigMap becomes the file <path>/<key>.
func (r sourceFetcher) configMapFiles(ctx context.Context, sources []rukpakv1alpha2.ConfigMapSource) (fetch.Files, error) {
	files := fetch.Files{}
	for _, s := range sources {
		cm := &corev1.ConfigMap{}
		key := client.ObjectKey{Namespace: r.namespace, Name: s.ConfigMap.Name}
		if err := r.reader.Get(ctx, key, cm); err != nil {
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
