package appmode

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
)

// Mode is the App mode.
type Mode struct {
	client client.Client
	store  *store.Store
}

// New is the App mode writing through c and fetching content through s.
func New(c client.Client, s *store.Store) *Mode {
	return &Mode{client: c, store: s}
}
