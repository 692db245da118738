package translate

import (
	"fmt"
	"path"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// Content names the Secrets holding a bundle the adapter fetched itself.
type Content struct {
	Secrets []ContentSecret
}

// ContentSecret is one Secret of files and the directory they belong in.
type ContentSecret struct {
	Name string
	Dir  string
}

// AdapterFetches reports whether the adapter must fetch bd's content itself.
// kapp-controller can only widen TLS trust for the whole cluster, so a
// per-BundleDeployment CA or skip-verify stays with the adapter.
// registry+v1 bundles are converted by the adapter. Helm
// bundles are fetched by the adapter too: rukpak finds the chart at the
// root or in a single top-level directory, and kapp-controller's
// helmTemplate needs that path before it fetches. Other classes never get
// here and fail on their class before anything is downloaded.
func AdapterFetches(bd *rukpakv1alpha2.BundleDeployment) bool {
	src := bd.Spec.Source
	switch bd.Spec.ProvisionerClassName {
	case rukpakv1alpha2.ClassHelm, rukpakv1alpha2.ClassRegistry:
		return true
	case rukpakv1alpha2.ClassPlain:
		switch {
		case src.Type == rukpakv1alpha2.SourceTypeImage && src.Image != nil:
			return src.Image.CertificateData != "" || src.Image.InsecureSkipTLSVerify
		case src.Type == rukpakv1alpha2.SourceTypeHTTP && src.HTTP != nil:
			return src.HTTP.Auth.InsecureSkipVerify
		case src.Type == rukpakv1alpha2.SourceTypeGit && src.Git != nil:
			return src.Git.Auth.InsecureSkipVerify
		}
	}
	return false
}

// BundleFiles keeps what the App needs of a bundle the adapter fetched.
// certs serves webhook certificates for registry+v1 bundles.
func BundleFiles(bd *rukpakv1alpha2.BundleDeployment, files map[string][]byte, certs convert.CertSource) (map[string][]byte, error) {
	switch bd.Spec.ProvisionerClassName {
	case rukpakv1alpha2.ClassHelm:
		return HelmFiles(bd, files)
	case rukpakv1alpha2.ClassRegistry:
		return RegistryFiles(bd, files, certs)
	default:
		return PlainFiles(files)
	}
}

// fetchFor maps the BD's source onto a kapp-controller fetch step, or onto
// the content Secrets when the adapter fetched it.
func fetchFor(bd *rukpakv1alpha2.BundleDeployment, content *Content) (kappctrlv1alpha1.AppFetch, error) {
	if content != nil {
		inline := &kappctrlv1alpha1.AppFetchInline{}
		for _, s := range content.Secrets {
			dir := s.Dir
			if dir == "." {
				dir = ""
			}
			inline.PathsFrom = append(inline.PathsFrom, kappctrlv1alpha1.AppFetchInlineSource{
				SecretRef: &kappctrlv1alpha1.AppFetchInlineSourceRef{Name: s.Name, DirectoryPath: dir},
			})
		}
		return kappctrlv1alpha1.AppFetch{Inline: inline}, nil
	}
	src := bd.Spec.Source
	switch src.Type {
	case rukpakv1alpha2.SourceTypeImage:
		if src.Image == nil {
			return kappctrlv1alpha1.AppFetch{}, &UnsupportedError{Reason: `spec.source.image must be set for source type "image"`}
		}
		img := &kappctrlv1alpha1.AppFetchImage{URL: src.Image.Ref}
		if src.Image.ImagePullSecretName != "" {
			img.SecretRef = &kappctrlv1alpha1.AppFetchLocalRef{Name: src.Image.ImagePullSecretName}
		}
		return kappctrlv1alpha1.AppFetch{Image: img}, nil
	case rukpakv1alpha2.SourceTypeHTTP:
		if src.HTTP == nil {
			return kappctrlv1alpha1.AppFetch{}, &UnsupportedError{Reason: `spec.source.http must be set for source type "http"`}
		}
		// rukpak's basic-auth Secret keys (username, password) are the ones
		// vendir reads, so the user's Secret is referenced as it is.
		h := &kappctrlv1alpha1.AppFetchHTTP{URL: src.HTTP.URL}
		if name := src.HTTP.Auth.Secret.Name; name != "" {
			h.SecretRef = &kappctrlv1alpha1.AppFetchLocalRef{Name: name}
		}
		return kappctrlv1alpha1.AppFetch{HTTP: h}, nil
	case rukpakv1alpha2.SourceTypeGit:
		return gitFetch(src.Git)
	case rukpakv1alpha2.SourceTypeConfigMaps:
		if len(src.ConfigMaps) == 0 {
			return kappctrlv1alpha1.AppFetch{}, &UnsupportedError{Reason: `spec.source.configMaps must be set for source type "configMaps"`}
		}
		// kapp-controller reads the ConfigMaps from the App's namespace (the
		// system namespace) and re-runs the App when one changes or appears.
		inline := &kappctrlv1alpha1.AppFetchInline{}
		for _, cm := range src.ConfigMaps {
			dir := path.Clean("./" + cm.Path)
			if dir == "." {
				dir = ""
			}
			inline.PathsFrom = append(inline.PathsFrom, kappctrlv1alpha1.AppFetchInlineSource{
				ConfigMapRef: &kappctrlv1alpha1.AppFetchInlineSourceRef{Name: cm.ConfigMap.Name, DirectoryPath: dir},
			})
		}
		return kappctrlv1alpha1.AppFetch{Inline: inline}, nil
	default:
		return kappctrlv1alpha1.AppFetch{}, &UnsupportedError{Reason: fmt.Sprintf("source type %q is not supported yet", src.Type)}
	}
}

// gitFetch maps a git source onto vendir's git fetch. rukpak's Secret keys
// (username/password, ssh-privatekey/ssh-knownhosts) are vendir's too.
func gitFetch(g *rukpakv1alpha2.GitSource) (kappctrlv1alpha1.AppFetch, error) {
	if g == nil {
		return kappctrlv1alpha1.AppFetch{}, &UnsupportedError{Reason: `spec.source.git must be set for source type "git"`}
	}
	f := &kappctrlv1alpha1.AppFetchGit{URL: g.Repository}
	switch {
	case g.Ref.Commit != "":
		f.Ref = g.Ref.Commit
	case g.Ref.Tag != "":
		f.Ref = g.Ref.Tag
	case g.Ref.Branch != "":
		// vendir fetches only this branch and checks out its head.
		f.Ref = "origin/" + g.Ref.Branch
	default:
		return kappctrlv1alpha1.AppFetch{}, &UnsupportedError{Reason: "spec.source.git.ref must name a branch, a tag or a commit"}
	}
	if dir := path.Clean("./" + g.Directory); dir != "." {
		f.SubPath = dir
	}
	if name := g.Auth.Secret.Name; name != "" {
		f.SecretRef = &kappctrlv1alpha1.AppFetchLocalRef{Name: name}
	}
	return kappctrlv1alpha1.AppFetch{Git: f}, nil
}
