package upgradeplan

import (
	"context"
	"fmt"

	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	"github.com/google/go-containerregistry/pkg/authn"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/offline"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/webhooks/crdsafety"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Read plans the upgrade of the catalog install that the
// PackageInstall ns/name made to the version to ("": the highest its
// channel reaches), writing nothing: the BundleDeployment and its channel's
// Packages are read through c, the custom resources the CRD upgrade safety
// check validates through dyn (with the caller's rights), and the bundles
// pulled with keychain.
func Read(ctx context.Context, c client.Reader, dyn dynamic.Interface, ns, name, to string, keychain authn.Keychain) (*Plan, error) {
	pi := &packagingv1alpha1.PackageInstall{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pi); err != nil {
		return nil, fmt.Errorf("read PackageInstall %s/%s: %w", ns, name, err)
	}
	var bds rukpakv1alpha2.BundleDeploymentList
	if err := c.List(ctx, &bds, client.HasLabels{catalog.LabelPackage}); err != nil {
		return nil, fmt.Errorf("list the catalog BundleDeployments: %w", err)
	}
	var bd *rukpakv1alpha2.BundleDeployment
	for i := range bds.Items {
		if a := bds.Items[i].Annotations; a[catalog.AnnotationPackagesNS] == ns && a[catalog.AnnotationInstall] == name {
			bd = &bds.Items[i]
		}
	}
	if bd == nil {
		return nil, fmt.Errorf("PackageInstall %s/%s installs no BundleDeployment of a catalog Package (yet): only a catalog install that rukpak-kapp installed has an upgrade to plan", ns, name)
	}
	in, ok := catalog.EntryOf(bd.Labels, bd.Annotations)
	if !ok {
		return nil, fmt.Errorf("BundleDeployment %s names no catalog entry", bd.Name)
	}
	nodes, unreadable, err := packagingapi.Channel(ctx, c, ns, in.RefName)
	if err != nil {
		return nil, err
	}
	plan, err := Compute(ctx, Input{BD: bd, Published: nodes, To: to,
		Fetcher: store.SourceFetcher{Reader: offline.NoCluster{}, Keychain: keychain},
		LiveCRD: func(ctx context.Context, name string) (*apiextensionsv1.CustomResourceDefinition, error) {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			err := c.Get(ctx, client.ObjectKey{Name: name}, crd)
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return crd, err
		},
		Objects: func(crd *apiextensionsv1.CustomResourceDefinition) crdsafety.Lister {
			return crdsafety.NewLister(dyn, crd)
		},
	})
	if err != nil && unreadable != nil {
		return nil, fmt.Errorf("%w (%v)", err, unreadable)
	}
	return plan, err
}
