package appmode

import (
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/store"
)

// AppInstaller is the App mode.
type AppInstaller struct {
	client client.Client
	// direct reads from the API server, where the cache may lag.
	direct client.Reader
	store  *store.Store
	// recorder says what a hand-back waits for; nil records nothing.
	recorder events.EventRecorder
}

// New is the App mode writing through c, reading what must not be stale
// through direct, fetching content through s and recording Events with
// recorder (nil: none).
func New(c client.Client, direct client.Reader, s *store.Store, recorder events.EventRecorder) *AppInstaller {
	return &AppInstaller{client: c, direct: direct, store: s, recorder: recorder}
}
