package client

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/upgradeplan"
)

// PlanUpgrade plans, against the cluster of cfg and writing nothing, the
// upgrade of the PackageInstall ns/name of a catalog Package along its
// channel to the version to ("": the highest the channel reaches), hop by
// hop (upgradeplan.Read), pulling each bundle of the path with the user's
// registry credentials.
func PlanUpgrade(ctx context.Context, cfg *rest.Config, ns, name, to string) (*upgradeplan.Plan, error) {
	scheme, err := adapter.Scheme()
	if err != nil {
		return nil, err
	}
	// The CRDs installed, which the first hop's changes are judged against.
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	// Only a reader goes further: the plan writes nothing.
	return upgradeplan.Read(ctx, client.Reader(c), dyn, ns, name, to, registryKeychain)
}
