package translate

import (
	"fmt"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// fetchFor maps the BD's source onto a kapp-controller fetch step.
func fetchFor(bd *rukpakv1alpha2.BundleDeployment) (kappctrlv1alpha1.AppFetch, error) {
	src := bd.Spec.Source
	switch src.Type {
	case rukpakv1alpha2.SourceTypeImage:
		if src.Image == nil {
			return kappctrlv1alpha1.AppFetch{}, &UnsupportedError{Reason: `spec.source.image must be set for source type "image"`}
		}
		if src.Image.CertificateData != "" || src.Image.InsecureSkipTLSVerify {
			// kapp-controller can only widen TLS trust for the whole cluster;
			// such images will be fetched by the adapter itself.
			return kappctrlv1alpha1.AppFetch{}, &UnsupportedError{Reason: "image sources with certificateData or insecureSkipTLSVerify are not supported yet; serve the image from a registry the cluster already trusts"}
		}
		img := &kappctrlv1alpha1.AppFetchImage{URL: src.Image.Ref}
		if src.Image.ImagePullSecretName != "" {
			img.SecretRef = &kappctrlv1alpha1.AppFetchLocalRef{Name: src.Image.ImagePullSecretName}
		}
		return kappctrlv1alpha1.AppFetch{Image: img}, nil
	default:
		return kappctrlv1alpha1.AppFetch{}, &UnsupportedError{Reason: fmt.Sprintf("source type %q is not supported yet", src.Type)}
	}
}
