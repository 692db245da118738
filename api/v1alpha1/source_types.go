package v1alpha1

// Source types as written in spec.source.type.
const (
	SourceTypeImage      = "image"
	SourceTypeGit        = "git"
	SourceTypeConfigMaps = "configMaps"
	SourceTypeHTTP       = "http"
	// SourceTypeUpload is content pushed to rukpak's upload service
	// (rukpakctl run); v1alpha1 only.
	SourceTypeUpload = "upload"
)

// BundleSource says where a bundle's files come from. Exactly one of the
// source fields is set on a Bundle; type names which one.
type BundleSource struct {
	// Type is the kind of source: image, git, configMaps, http or upload.
	Type string `json:"type"`
	// Image is an OCI image whose file system holds the bundle.
	Image *ImageSource `json:"image,omitempty"`
	// Git is a git repository that holds the bundle.
	Git *GitSource `json:"git,omitempty"`
	// ConfigMaps assemble the bundle from ConfigMaps in the system namespace.
	// The bound (not in rukpak) lets the API server afford the path rule.
	// +kubebuilder:validation:MaxItems:=64
	ConfigMaps []ConfigMapSource `json:"configMaps,omitempty"`
	// Upload is content uploaded to rukpak's bundle upload service.
	Upload *UploadSource `json:"upload,omitempty"`
	// HTTP is a gzipped tarball served over HTTP(S).
	HTTP *HTTPSource `json:"http,omitempty"`
}

// ImageSource is an OCI image reference.
type ImageSource struct {
	// Ref is the image reference, by tag or by digest.
	Ref string `json:"ref"`
	// ImagePullSecretName names a dockerconfigjson Secret in the system namespace.
	ImagePullSecretName string `json:"pullSecret,omitempty"`
}

// GitSource is a repository, a ref in it and the bundle's directory.
type GitSource struct {
	// Repository is a URL that git can clone.
	Repository string `json:"repository"`
	// Directory is the bundle's root inside the repository; the repository root by default.
	Directory string `json:"directory,omitempty"`
	// Ref selects exactly one of a branch, a tag or a commit.
	Ref GitRef `json:"ref"`
	// Auth configures credentials and TLS for the clone.
	Auth Authorization `json:"auth,omitempty"`
}

// GitRef names exactly one branch, tag or commit.
type GitRef struct {
	// Branch to deploy; its head is followed.
	Branch string `json:"branch,omitempty"`
	// Tag to deploy.
	Tag string `json:"tag,omitempty"`
	// Commit to deploy.
	Commit string `json:"commit,omitempty"`
}

// ConfigMapSource places one ConfigMap's keys as files under Path.
type ConfigMapSource struct {
	// ConfigMap names a ConfigMap in the system namespace.
	ConfigMap LocalObjectReference `json:"configMap"`
	// Path is the directory, relative to the bundle root, that receives the files.
	// The bound (not in rukpak) lets the API server afford the path rule.
	// +kubebuilder:validation:MaxLength:=256
	Path string `json:"path,omitempty"`
}

// HTTPSource is a URL of a gzipped tarball.
type HTTPSource struct {
	// URL of the tarball.
	URL string `json:"url"`
	// Auth configures credentials and TLS for the download.
	Auth Authorization `json:"auth,omitempty"`
}

// Authorization names a Secret in the system namespace and TLS leniency.
type Authorization struct {
	// Secret holds username/password (http/https) or ssh-privatekey/ssh-knownhosts (ssh).
	Secret LocalObjectReference `json:"secret,omitempty"`
	// InsecureSkipVerify skips verification of the server's certificate.
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
}

// LocalObjectReference names an object in the system namespace.
// +structType=atomic
type LocalObjectReference struct {
	// Name of the referent.
	Name string `json:"name,omitempty"`
}

// UploadSource has no fields: the content is what was uploaded for the
// Bundle's name.
type UploadSource struct{}
