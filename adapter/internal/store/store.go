package store

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
)

// LabelContent marks the Secrets that hold content the adapter fetched.
const LabelContent = "core.rukpak.io/content"

// Store keeps what the adapter fetched for each BundleDeployment.
type Store struct {
	client  client.Client
	cfg     translate.Config
	fetcher Fetcher
	cache   contentCache
	deps    *Dependencies
	// retries holds back the fetch of a source that failed until its
	// backoff has passed.
	retries fetch.Backoff
}

// New is a Store that reads and writes through c (the informer cache for
// reads), fetches with fetcher and answers olm.gvk dependencies with apis.
func New(c client.Client, cfg translate.Config, fetcher Fetcher, apis APIs) *Store {
	return &Store{client: c, cfg: cfg, fetcher: fetcher, cache: newContentCache(), deps: newDependencies(c, cfg, apis)}
}

// Dependencies checks bundles' declared dependencies against the cluster,
// for what installs catalog bundles' dependencies (the OperatorInstall
// controller) as for the store's own installs.
func (s *Store) Dependencies() *Dependencies { return s.deps }

// Fetcher is how the store fetches sources, for what reads a bundle as it
// is now alongside the store (the take-over).
func (s *Store) Fetcher() Fetcher { return s.fetcher }

// Forget drops what is remembered of the BundleDeployment name (uid).
func (s *Store) Forget(name string, uid types.UID) {
	s.cache.forget(uid)
	s.deps.Forget(name)
	s.retries.Forget(string(uid))
}

// RetryFetchesNow lets every fetch that failed run again at the next look,
// its backoff forgotten: what they may have failed on
// (kapp-controller-config's CAs or proxies) changed.
func (s *Store) RetryFetchesNow() { s.retries.ForgetAll() }

// DependentsOf maps any event to the BundleDeployments waiting for a dependency.
func (s *Store) DependentsOf(ctx context.Context, o client.Object) []reconcile.Request {
	return s.deps.DependentsOf(ctx, o)
}
