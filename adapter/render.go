package adapter

import (
	"context"

	"github.com/google/go-containerregistry/pkg/authn"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/appmode"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/offline"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/takeover"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/v1alpha1/deployments"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/v1alpha1/deployments/templates"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Render returns the objects the controller would apply for bd, offline.
// For a BundleDeployment of rukpak's first API (its v1alpha2 form, without
// an install namespace) that is its template's Bundle too, and its App as
// rukpak v0.16 installed it. An image source that names no pull secret is
// pulled with keychain's credentials (nil: anonymously).
func Render(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, cfg translate.Config, keychain authn.Keychain) ([]runtime.Object, error) {
	if !rukpakv1alpha1.IsV1alpha1(bd) {
		return offline.Render(ctx, bd, cfg, keychain)
	}
	first := rukpakv1alpha1.FromV1alpha2(bd)
	if first.Spec.Template.Spec.Source.Type == rukpakv1alpha1.SourceTypeUpload {
		return nil, deployments.ErrUpload
	}
	objs, err := offline.Render(ctx, templates.View(bd, cfg.SystemNamespace), cfg, keychain)
	if err != nil {
		return nil, err
	}
	return append([]runtime.Object{templates.Desired(first)}, objs...), nil
}

// PackageOptions say where the packaging objects of `render --as-package`
// go and how the Package gets its content.
type PackageOptions = offline.PackageOptions

// PackageExport is what `render --as-package` prints for one BundleDeployment.
type PackageExport = offline.PackageExport

// RenderPackage makes the Carvel packaging objects that install bd's content.
func RenderPackage(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, opts PackageOptions) (*PackageExport, error) {
	return offline.RenderPackage(ctx, templates.View(bd, opts.Config.SystemNamespace), opts)
}

// TakeOverInput reads what takeover.Take decides the take-over of bd from.
func TakeOverInput(ctx context.Context, c client.Reader, mapper meta.RESTMapper, systemNamespace string, bd *rukpakv1alpha2.BundleDeployment, readLive bool) (takeover.Input, error) {
	return appmode.TakeOverInput(ctx, c, mapper, store.SourceFetcher{Reader: c, Namespace: systemNamespace}, systemNamespace, bd, readLive)
}
