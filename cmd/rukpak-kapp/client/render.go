package client

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Render is what the controller would apply for bd (adapter.Render), with
// no cluster; a bundle the adapter fetches itself is pulled with the
// user's registry credentials.
func Render(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, cfg translate.Config) ([]runtime.Object, error) {
	return adapter.Render(ctx, bd, cfg, registryKeychain)
}

// RenderPackage is what installs bd through a PackageInstall
// (adapter.RenderPackage), pulled with the user's registry credentials.
// With push (a repository) set, the bundle's content is published there as
// an imgpkg bundle, tagged with the Package version, which the Package
// fetches.
func RenderPackage(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, opts adapter.PackageOptions, push string) (*adapter.PackageExport, error) {
	opts.Keychain = registryKeychain
	if push != "" {
		opts.Push = func(ctx context.Context, files map[string][]byte, tag string) (string, error) {
			return pushBundle(ctx, push, tag, files, "rukpak-kapp render --as-package")
		}
	}
	return adapter.RenderPackage(ctx, bd, opts)
}

// Manifest is obj as a manifest to apply or publish: its fields without
// the status and the creation time the cluster sets, after trim (nil:
// nothing more) has had its say.
func Manifest(obj runtime.Object, trim func(map[string]any)) (map[string]any, error) {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	if trim != nil {
		trim(raw)
	}
	delete(raw, "status")
	if md, ok := raw["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	return raw, nil
}

// TrimPackage leaves out the empty fields a Package always carries
// (releasedAt, valuesSchema), which say nothing.
func TrimPackage(raw map[string]any) {
	spec, _ := raw["spec"].(map[string]any)
	if spec == nil {
		return
	}
	if spec["releasedAt"] == nil {
		delete(spec, "releasedAt")
	}
	if schema, ok := spec["valuesSchema"].(map[string]any); ok && schema["openAPIv3"] == nil {
		delete(spec, "valuesSchema")
	}
}
