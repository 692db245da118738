package upgradeplan

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/authn"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/operatorinstall/plan"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/offline"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/packagingapi"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/webhooks/crdsafety"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Read plans the upgrade of the catalog install ns/name (its
// PackageInstall's and OperatorInstall's name) to the version to ("": the
// highest its channel reaches), writing nothing: the OperatorInstall, the
// BundleDeployment it wrote and its channel's Packages are read through c
// (kapp-controller's packaging API shows the namespace what it sees), the
// custom resources the CRD upgrade safety check validates through dyn
// (with the caller's rights), and the bundles pulled with keychain.
func Read(ctx context.Context, c client.Reader, dyn dynamic.Interface, ns, name, to string, keychain authn.Keychain) (*Plan, error) {
	oi := &catalogsv1alpha1.OperatorInstall{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, oi); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("PackageInstall %s/%s installs no catalog Package (no OperatorInstall %s/%s): only a catalog install has an upgrade to plan", ns, name, ns, name)
		}
		return nil, fmt.Errorf("read OperatorInstall %s/%s: %w", ns, name, err)
	}
	bd := &rukpakv1alpha2.BundleDeployment{}
	if err := c.Get(ctx, client.ObjectKey{Name: plan.BundleDeploymentName(oi)}, bd); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("OperatorInstall %s/%s has installed nothing yet (no BundleDeployment %s): there is no upgrade to plan", ns, name, plan.BundleDeploymentName(oi))
		}
		return nil, fmt.Errorf("read BundleDeployment %s: %w", plan.BundleDeploymentName(oi), err)
	}
	g, err := packagingapi.NewDirectPackages(c).Channel(ctx, ns, oi.Spec.RefName)
	if err != nil {
		return nil, err
	}
	p, err := Compute(ctx, Input{Install: oi, BD: bd, Published: g.Nodes, To: to,
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
	if err != nil && g.Unreadable != nil {
		return nil, fmt.Errorf("%w (%v)", err, g.Unreadable)
	}
	return p, err
}
