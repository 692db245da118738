package translate

import (
	"fmt"
	"path"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// Packed is a bundle the adapter fetched itself, packed into content
// Secrets: their names, the source it was fetched from, what it says of
// itself.
type Packed struct {
	Secrets []ContentSecret
	// Resolved is the source pinned to what was fetched.
	Resolved *rukpakv1alpha2.BundleSource
	// Bundle is what a registry+v1 bundle says of itself; nil otherwise.
	Bundle *BundleMetadata
}

// BundleMetadata is what the App records of a registry+v1 bundle: its
// identity and labels, which other bundles' dependencies look for, what it
// depends on, and how its conversion changed it.
type BundleMetadata struct {
	Package      convert.Package      `json:"package"`
	Labels       []string             `json:"labels,omitempty"`
	Dependencies []convert.Dependency `json:"dependencies,omitempty"`
	Notes        []string             `json:"notes,omitempty"`
}

// ContentSecret is one Secret of files and the directory they belong in.
type ContentSecret struct {
	Name string
	Dir  string
}

// fetchFor maps the BD's source onto a kapp-controller fetch step, or onto
// the content Secrets when the adapter fetched it.
func fetchFor(bd *rukpakv1alpha2.BundleDeployment, content *Packed) (kappctrlv1alpha1.AppFetch, error) {
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
