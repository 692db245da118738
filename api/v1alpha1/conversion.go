package v1alpha1

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Annotations that carry, through a conversion, what the other version has
// no field for. They are the conversion's own: each is written on one side
// and consumed on the other, so a user never sees it on the version that
// has the fields. A malformed value is dropped, never an error: a failed
// conversion would make every object of the list unreadable.
const (
	// AnnotationV1alpha1Spec, on the v1alpha2 (stored) form, holds the
	// v1alpha1 spec that v1alpha2 cannot say (JSON of v1alpha1Spec): the
	// BundleDeployment's own class when it is not the one its template's
	// class implies, the template's metadata, and an upload source.
	AnnotationV1alpha1Spec = "core.rukpak.io/v1alpha1-spec"
	// AnnotationActiveBundle, on the v1alpha2 form, is status.activeBundle.
	// The conversion writes it when a v1alpha1 status is stored, so it
	// changes with status writes at v1alpha1.
	AnnotationActiveBundle = "core.rukpak.io/active-bundle"
	// AnnotationV1alpha2Fields, on the v1alpha1 form, holds the v1alpha2
	// fields that v1alpha1 has no place for (JSON of v1alpha2Fields).
	AnnotationV1alpha2Fields = "core.rukpak.io/v1alpha2-fields"
)

// v1alpha1Spec is what a v1alpha1 spec says beyond v1alpha2's fields.
type v1alpha1Spec struct {
	ProvisionerClassName *string           `json:"provisionerClassName,omitempty"`
	TemplateMetadata     *templateMetadata `json:"templateMetadata,omitempty"`
	Upload               bool              `json:"upload,omitempty"`
}

// templateMetadata is what the API server keeps of a template's metadata
// (the schema has only these fields).
type templateMetadata struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Finalizers  []string          `json:"finalizers,omitempty"`
}

// v1alpha2Fields is what a v1alpha2 object holds beyond v1alpha1's fields.
type v1alpha2Fields struct {
	InstallNamespace string                    `json:"installNamespace,omitempty"`
	Preflight        *v1alpha2.PreflightConfig `json:"preflight,omitempty"`
	Image            *imageFields              `json:"image,omitempty"`
	ResolvedSource   *v1alpha2.BundleSource    `json:"resolvedSource,omitempty"`
	ContentURL       string                    `json:"contentURL,omitempty"`
}

type imageFields struct {
	InsecureSkipTLSVerify bool   `json:"insecureSkipTLSVerify,omitempty"`
	CertificateData       string `json:"certificateData,omitempty"`
}

// OwnClassFor is the class a v1alpha1 BundleDeployment has for a template
// of the given class, as rukpak v0.16 wired them: registry+v1 Bundles were
// installed by the plain provisioner, every other class by its own.
func OwnClassFor(templateClass string) string {
	if templateClass == ClassRegistry {
		return ClassPlain
	}
	return templateClass
}

// IsV1alpha1 says whether a stored BundleDeployment is one of the first
// generation (its Bundles generated from spec.template, HasValidBundle and
// activeBundle reported): it has no install namespace, which v1alpha2
// requires and v1alpha1 lacks. A v1alpha2 object read and written back at
// v1alpha1 keeps its install namespace, so it stays a v1alpha2 one.
func IsV1alpha1(bd *v1alpha2.BundleDeployment) bool {
	return bd.Spec.InstallNamespace == ""
}

// ConvertTo converts this BundleDeployment to the hub version, v1alpha2.
func (src *BundleDeployment) ConvertTo(dstRaw conversion.Hub) error {
	dst := dstRaw.(*v1alpha2.BundleDeployment)
	*dst = *ToV1alpha2(src)
	return nil
}

// ConvertFrom converts a v1alpha2 BundleDeployment to this version.
func (dst *BundleDeployment) ConvertFrom(srcRaw conversion.Hub) error {
	src := srcRaw.(*v1alpha2.BundleDeployment)
	*dst = *FromV1alpha2(src)
	return nil
}

// ToV1alpha2 converts a v1alpha1 BundleDeployment to v1alpha2, the way
// rukpak v0.17 changed the API: the template's class and source become
// the BundleDeployment's, the config stays. What v1alpha2 cannot say is
// kept in annotations, so FromV1alpha2 gives src back.
func ToV1alpha2(src *BundleDeployment) *v1alpha2.BundleDeployment {
	in := src.DeepCopy()
	dst := &v1alpha2.BundleDeployment{ObjectMeta: in.ObjectMeta}
	dst.SetGroupVersionKind(v1alpha2.GroupVersion.WithKind("BundleDeployment"))
	annotations := in.Annotations
	var extra v1alpha2Fields
	if raw, ok := annotations[AnnotationV1alpha2Fields]; ok {
		if json.Unmarshal([]byte(raw), &extra) != nil {
			extra = v1alpha2Fields{}
		}
	}
	// Whatever the reserved keys held on this side is not the object's.
	delete(annotations, AnnotationV1alpha2Fields)
	delete(annotations, AnnotationV1alpha1Spec)
	delete(annotations, AnnotationActiveBundle)

	tmpl := in.Spec.Template
	dst.Spec = v1alpha2.BundleDeploymentSpec{
		InstallNamespace:     extra.InstallNamespace,
		ProvisionerClassName: tmpl.Spec.ProvisionerClassName,
		Source:               sourceToV1alpha2(tmpl.Spec.Source, extra.Image),
		Config:               in.Spec.Config,
		Preflight:            extra.Preflight,
	}
	dst.Status = v1alpha2.BundleDeploymentStatus{
		Conditions:         in.Status.Conditions,
		ResolvedSource:     extra.ResolvedSource,
		ContentURL:         extra.ContentURL,
		ObservedGeneration: in.Status.ObservedGeneration,
	}

	spec := v1alpha1Spec{Upload: tmpl.Spec.Source.Upload != nil, TemplateMetadata: metadataOf(tmpl.ObjectMeta)}
	if in.Spec.ProvisionerClassName != OwnClassFor(tmpl.Spec.ProvisionerClassName) {
		spec.ProvisionerClassName = &in.Spec.ProvisionerClassName
	}
	if spec != (v1alpha1Spec{}) {
		annotations = setAnnotation(annotations, AnnotationV1alpha1Spec, mustJSON(spec))
	}
	if in.Status.ActiveBundle != "" {
		annotations = setAnnotation(annotations, AnnotationActiveBundle, in.Status.ActiveBundle)
	}
	dst.Annotations = emptyAsNil(annotations)
	return dst
}

// FromV1alpha2 converts a v1alpha2 BundleDeployment to v1alpha1. v1alpha2's
// own fields (installNamespace, preflight, the image's TLS settings,
// resolvedSource, contentURL) are kept in an annotation, so ToV1alpha2
// gives src back; they reach v1alpha2 again only while v1alpha1 has a
// place to hang them (the image settings need an image source).
func FromV1alpha2(src *v1alpha2.BundleDeployment) *BundleDeployment {
	in := src.DeepCopy()
	dst := &BundleDeployment{ObjectMeta: in.ObjectMeta}
	dst.SetGroupVersionKind(GroupVersion.WithKind("BundleDeployment"))
	annotations := in.Annotations
	var spec v1alpha1Spec
	if raw, ok := annotations[AnnotationV1alpha1Spec]; ok {
		if json.Unmarshal([]byte(raw), &spec) != nil {
			spec = v1alpha1Spec{}
		}
	}
	activeBundle := annotations[AnnotationActiveBundle]
	delete(annotations, AnnotationV1alpha1Spec)
	delete(annotations, AnnotationActiveBundle)
	delete(annotations, AnnotationV1alpha2Fields)

	source, image := sourceFromV1alpha2(in.Spec.Source)
	if spec.Upload {
		source.Upload = &UploadSource{}
	}
	own := OwnClassFor(in.Spec.ProvisionerClassName)
	if spec.ProvisionerClassName != nil {
		own = *spec.ProvisionerClassName
	}
	dst.Spec = BundleDeploymentSpec{
		ProvisionerClassName: own,
		Template: BundleTemplate{
			ObjectMeta: spec.TemplateMetadata.objectMeta(),
			Spec:       BundleSpec{ProvisionerClassName: in.Spec.ProvisionerClassName, Source: source},
		},
		Config: in.Spec.Config,
	}
	dst.Status = BundleDeploymentStatus{
		Conditions:         in.Status.Conditions,
		ActiveBundle:       activeBundle,
		ObservedGeneration: in.Status.ObservedGeneration,
	}

	extra := v1alpha2Fields{
		InstallNamespace: in.Spec.InstallNamespace,
		Preflight:        in.Spec.Preflight,
		Image:            image,
		ResolvedSource:   in.Status.ResolvedSource,
		ContentURL:       in.Status.ContentURL,
	}
	if extra.InstallNamespace != "" || extra.Preflight != nil || extra.Image != nil || extra.ResolvedSource != nil || extra.ContentURL != "" {
		annotations = setAnnotation(annotations, AnnotationV1alpha2Fields, mustJSON(extra))
	}
	dst.Annotations = emptyAsNil(annotations)
	return dst
}

// SourceToV1alpha2 is a v1alpha1 source as v1alpha2 says it (an upload
// source keeps only its type).
func SourceToV1alpha2(in BundleSource) v1alpha2.BundleSource {
	return sourceToV1alpha2(in, nil)
}

// SourceFromV1alpha2 is a v1alpha2 source as v1alpha1 says it, without
// the image's TLS settings v1alpha1 has no fields for.
func SourceFromV1alpha2(in v1alpha2.BundleSource) BundleSource {
	out, _ := sourceFromV1alpha2(in)
	return out
}

func sourceToV1alpha2(in BundleSource, image *imageFields) v1alpha2.BundleSource {
	out := v1alpha2.BundleSource{Type: in.Type}
	if in.Image != nil {
		out.Image = &v1alpha2.ImageSource{Ref: in.Image.Ref, ImagePullSecretName: in.Image.ImagePullSecretName}
		if image != nil {
			out.Image.InsecureSkipTLSVerify = image.InsecureSkipTLSVerify
			out.Image.CertificateData = image.CertificateData
		}
	}
	if in.Git != nil {
		out.Git = &v1alpha2.GitSource{
			Repository: in.Git.Repository,
			Directory:  in.Git.Directory,
			Ref:        v1alpha2.GitRef{Branch: in.Git.Ref.Branch, Tag: in.Git.Ref.Tag, Commit: in.Git.Ref.Commit},
			Auth:       authToV1alpha2(in.Git.Auth),
		}
	}
	if in.ConfigMaps != nil {
		out.ConfigMaps = make([]v1alpha2.ConfigMapSource, len(in.ConfigMaps))
		for i, cm := range in.ConfigMaps {
			out.ConfigMaps[i] = v1alpha2.ConfigMapSource{ConfigMap: v1alpha2.LocalObjectReference{Name: cm.ConfigMap.Name}, Path: cm.Path}
		}
	}
	if in.HTTP != nil {
		out.HTTP = &v1alpha2.HTTPSource{URL: in.HTTP.URL, Auth: authToV1alpha2(in.HTTP.Auth)}
	}
	return out
}

// sourceFromV1alpha2 also returns the image settings v1alpha1 lacks, nil
// when there are none.
func sourceFromV1alpha2(in v1alpha2.BundleSource) (BundleSource, *imageFields) {
	out := BundleSource{Type: in.Type}
	var image *imageFields
	if in.Image != nil {
		out.Image = &ImageSource{Ref: in.Image.Ref, ImagePullSecretName: in.Image.ImagePullSecretName}
		if in.Image.InsecureSkipTLSVerify || in.Image.CertificateData != "" {
			image = &imageFields{InsecureSkipTLSVerify: in.Image.InsecureSkipTLSVerify, CertificateData: in.Image.CertificateData}
		}
	}
	if in.Git != nil {
		out.Git = &GitSource{
			Repository: in.Git.Repository,
			Directory:  in.Git.Directory,
			Ref:        GitRef{Branch: in.Git.Ref.Branch, Tag: in.Git.Ref.Tag, Commit: in.Git.Ref.Commit},
			Auth:       authFromV1alpha2(in.Git.Auth),
		}
	}
	if in.ConfigMaps != nil {
		out.ConfigMaps = make([]ConfigMapSource, len(in.ConfigMaps))
		for i, cm := range in.ConfigMaps {
			out.ConfigMaps[i] = ConfigMapSource{ConfigMap: LocalObjectReference{Name: cm.ConfigMap.Name}, Path: cm.Path}
		}
	}
	if in.HTTP != nil {
		out.HTTP = &HTTPSource{URL: in.HTTP.URL, Auth: authFromV1alpha2(in.HTTP.Auth)}
	}
	return out, image
}

func authToV1alpha2(in Authorization) v1alpha2.Authorization {
	return v1alpha2.Authorization{Secret: v1alpha2.LocalObjectReference{Name: in.Secret.Name}, InsecureSkipVerify: in.InsecureSkipVerify}
}

func authFromV1alpha2(in v1alpha2.Authorization) Authorization {
	return Authorization{Secret: LocalObjectReference{Name: in.Secret.Name}, InsecureSkipVerify: in.InsecureSkipVerify}
}

// metadataOf keeps what the API server keeps of a template's metadata; nil
// when that is nothing.
func metadataOf(m metav1.ObjectMeta) *templateMetadata {
	if m.Name == "" && m.Namespace == "" && len(m.Labels) == 0 && len(m.Annotations) == 0 && len(m.Finalizers) == 0 {
		return nil
	}
	return &templateMetadata{Name: m.Name, Namespace: m.Namespace, Labels: m.Labels, Annotations: m.Annotations, Finalizers: m.Finalizers}
}

func (t *templateMetadata) objectMeta() metav1.ObjectMeta {
	if t == nil {
		return metav1.ObjectMeta{}
	}
	return metav1.ObjectMeta{Name: t.Name, Namespace: t.Namespace, Labels: t.Labels, Annotations: t.Annotations, Finalizers: t.Finalizers}
}

func setAnnotation(annotations map[string]string, key, value string) map[string]string {
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[key] = value
	return annotations
}

func emptyAsNil(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// mustJSON marshals the records above, which hold only strings, maps,
// slices and bools: encoding them cannot fail.
func mustJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(data)
}
