package controller

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
)

// What the dispatcher is given: the two install modes and the content
// store, declared here by their consumer so the dispatcher is tested with
// fakes, and its settings.

// AppMode installs as an App, takes over from rukpak, hands back, removes.
type AppMode interface {
	Install(ctx context.Context, s *scope.Scope) scope.Outcome
	Release(ctx context.Context, s *scope.Scope) (done bool, err error)
	Finalize(ctx context.Context, s *scope.Scope) (gone bool, err error)
}

// ServeMode installs as a PackageInstall, leaves that mode, removes.
type ServeMode interface {
	Memory
	Install(ctx context.Context, s *scope.Scope) scope.Outcome
	Leave(ctx context.Context, s *scope.Scope) (gone bool, err error)
	Finalize(ctx context.Context, s *scope.Scope) (waits bool, err error)
}

// Content is what the dispatcher needs of the content store: its memory,
// and the BundleDeployments waiting for a dependency, for the watches.
type Content interface {
	Memory
	Wake(ctx context.Context, o client.Object) []reconcile.Request
}

// KappReady says whether kapp-controller's API is installed (KappAPI).
type KappReady interface{ Ready() bool }

// Settings are the dispatcher's configuration.
type Settings struct {
	Config  translate.Config
	Classes Classes
	// InstallDefault is --install-with; the annotation wins; "" is the App.
	InstallDefault scope.InstallWith
}
