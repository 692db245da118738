package conversion

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/webhooks"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// What config/crd declares (patches/bundledeployment_conversion.yaml).
const (
	// Path is where kube-apiserver sends ConversionReviews.
	Path = "/convert"
	// CRD is the CustomResourceDefinition that converts.
	CRD = "bundledeployments.core.rukpak.io"
)

// Scheme knows the two generations and nothing else: the conversion
// handler converts every kind it knows that has a hub.
func Scheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{rukpakv1alpha1.AddToScheme, rukpakv1alpha2.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("conversion scheme: %w", err)
		}
	}
	return scheme, nil
}

// Add serves the conversion on srv and has srv keep the CRD's caBundle;
// nil srv (webhooks turned off) adds nothing, and v1alpha1 requests then
// fail with kube-apiserver's "conversion webhook ... failed".
func Add(srv *webhooks.Server) error {
	if srv == nil {
		return nil
	}
	scheme, err := Scheme()
	if err != nil {
		return err
	}
	srv.Register(Path, conversion.NewWebhookHandler(scheme, conversion.NewRegistry()))
	return srv.AddCABundleTarget(webhooks.CRDConversion(CRD))
}
