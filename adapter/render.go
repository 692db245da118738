package adapter

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Render returns the objects the controller would apply for bd, built by
// the same functions the controller uses. Content the adapter fetches itself
// is fetched here too; a pull secret cannot be read without a cluster.
func Render(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, cfg translate.Config) ([]runtime.Object, error) {
	var objs []runtime.Object
	var c *translate.Content
	if translate.AdapterFetches(bd) {
		img := bd.Spec.Source.Image
		if img.ImagePullSecretName != "" {
			return nil, fmt.Errorf("image %s needs pull secret %q, which render cannot read without a cluster", img.Ref, img.ImagePullSecretName)
		}
		chunks, _, err := fetchAndPack(ctx, bd, fetch.ImageOptions{CAData: img.CertificateData, InsecureSkipTLSVerify: img.InsecureSkipTLSVerify})
		if err != nil {
			return nil, err
		}
		for _, ch := range chunks {
			objs = append(objs, contentSecret(bd, cfg.SystemNamespace, ch))
		}
		c = contentRefs(chunks)
	}
	app, err := translate.App(bd, cfg, c)
	if err != nil {
		return nil, err
	}
	return append(objs, app), nil
}
