package bundledeployment

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// What the BundleDeployment reconciler is given: the two install modes and the content
// store, declared here by their consumer so the BundleDeployment reconciler is tested with
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

// DependencyWaits is what the BundleDeployment reconciler needs of the content store: the
// BundleDeployments whose registry+v1 bundles wait for a dependency, woken
// by the watches when o (a CRD, an APIService, an App) may be one, and its
// memory of them.
type DependencyWaits interface {
	Memory
	DependentsOf(ctx context.Context, o client.Object) []reconcile.Request
}

// Bundles serves BundleDeployments of rukpak's first API (v1alpha1):
// what the BundleDeployment reconciler does differently for one is behind it (package
// deployments). The BundleDeployment reconciler asks Serves once per reconcile, then the
// view and Read in load, Prepare as an install's step, and Report for the
// status write.
type Bundles interface {
	// Serves says bd, as stored, is one of rukpak's first API.
	Serves(bd *rukpakv1alpha2.BundleDeployment) bool
	// View is bd as it is installed (rukpak v0.16's install namespace).
	View(bd *rukpakv1alpha2.BundleDeployment) *rukpakv1alpha2.BundleDeployment
	// Read finds bd's generated Bundles, writing nothing; reported is bd as
	// the status computation reads what is installed.
	Read(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) (g *scope.Generated, reported *rukpakv1alpha2.BundleDeployment, err error)
	// Prepare writes what Read found missing (the template's Bundle when
	// makeMissing is set; rukpak's finalizers released); stop, when set, is
	// reported in place of the install.
	Prepare(ctx context.Context, g *scope.Generated, makeMissing bool) (stop *scope.Outcome)
	// Report writes the v1alpha1 statuses mapped from out, computed from
	// facts, when write says so or the Bundle's news cannot wait; wrote and
	// installed say what it wrote, for the BundleDeployment reconciler's memories.
	Report(ctx context.Context, s *scope.Scope, facts status.Facts, out status.Computed, write, installing bool) (wrote bool, installed *metav1.Condition, err error)
}

// KappReady says whether kapp-controller's API is installed (kappapi.API).
type KappReady interface{ Ready() bool }

// Settings are the BundleDeployment reconciler's configuration.
type Settings struct {
	Config  translate.Config
	Classes Classes
	// InstallDefault is --install-with; the annotation wins; "" is the App.
	InstallDefault scope.InstallWith
}
