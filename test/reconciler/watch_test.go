package reconciler_test

import (
	"context"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// bdHistory records every version of a BundleDeployment a watch delivers,
// as a client watching it would see them.
type bdHistory struct {
	mu       sync.Mutex
	versions []*rukpakv1alpha2.BundleDeployment
}

// watchBD records the versions of BundleDeployment name until the spec ends.
func watchBD(ctx context.Context, name string) *bdHistory {
	wc, err := client.NewWithWatch(env.ControlPlane.Config, client.Options{Scheme: env.Scheme})
	Expect(err).NotTo(HaveOccurred())
	w, err := wc.Watch(ctx, &rukpakv1alpha2.BundleDeploymentList{}, client.MatchingFields{"metadata.name": name})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(w.Stop)
	h := &bdHistory{}
	go func() {
		for ev := range w.ResultChan() {
			if bd, ok := ev.Object.(*rukpakv1alpha2.BundleDeployment); ok && ev.Type != watch.Error {
				h.mu.Lock()
				h.versions = append(h.versions, bd)
				h.mu.Unlock()
			}
		}
	}()
	return h
}

// seen is every version recorded so far.
func (h *bdHistory) seen() []*rukpakv1alpha2.BundleDeployment {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*rukpakv1alpha2.BundleDeployment(nil), h.versions...)
}
