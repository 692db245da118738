package offline

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/bundlefiles"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// Render returns the objects the controller would apply for bd, built by
// the same functions the controller uses. Content the adapter fetches itself
// is fetched here too, an image with keychain's credentials (nil:
// anonymously); a pull secret cannot be read without a cluster.
func Render(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment, cfg translate.Config, keychain authn.Keychain) ([]runtime.Object, error) {
	var objs []runtime.Object
	var c *translate.Packed
	// Without a cluster, an App goes where a new one would.
	cfg.AppNamespace = translate.Placement(cfg, bd.Name)
	if bundlefiles.AdapterFetches(bd) {
		m, err := store.Materialize(ctx, store.SourceFetcher{Reader: NoCluster{}, Namespace: cfg.SystemNamespace, Keychain: keychain}, bd, convert.FreshCertificates(time.Now()))
		if err != nil {
			return nil, err
		}
		chunks, err := m.Pack(bd)
		if err != nil {
			return nil, err
		}
		c = &translate.Packed{Resolved: m.Resolved, Bundle: store.Recorded(m.Layout)}
		for _, ch := range chunks {
			objs = append(objs, store.ContentSecret(bd, cfg.AppNamespace, ch))
			c.Secrets = append(c.Secrets, translate.ContentSecret{Name: ch.Name, Dir: ch.Dir})
		}
	}
	app, err := translate.AppInStyle(bd, cfg, c, translate.StyleAsBundled)
	if err != nil {
		return nil, err
	}
	return append(objs, app), nil
}

// NoCluster stands in for the API when rendering offline: a BD that names a
// Secret or ConfigMap cannot be rendered without one.
type NoCluster struct{}

func (NoCluster) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	return fmt.Errorf("%T %s cannot be read without a cluster", obj, key)
}

func (NoCluster) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	return fmt.Errorf("%T cannot be listed without a cluster", list)
}
