package controller

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
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

// Bundles keeps the Bundles a BundleDeployment of rukpak's first API
// (v1alpha1) generates from its template (package bundleset).
type Bundles interface {
	// Generate lists bd's Bundles and finds its current template's,
	// making it when create is set. The error is one to report and retry.
	Generate(ctx context.Context, bd *rukpakv1alpha1.BundleDeployment, create bool) (*scope.Generated, error)
	// Report writes b's status when it differs from st.
	Report(ctx context.Context, b *rukpakv1alpha1.Bundle, st rukpakv1alpha1.BundleStatus) error
	// Prune deletes bd's Bundles other than current, which is installed.
	Prune(ctx context.Context, bd *rukpakv1alpha1.BundleDeployment, listed []rukpakv1alpha1.Bundle, current string) error
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
