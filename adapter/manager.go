package adapter

import (
	"fmt"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	datav1alpha1 "carvel.dev/kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/drift"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Options are the adapter process's settings.
type Options struct {
	Config  translate.Config
	Classes Classes
	// InstallWith is how BundleDeployments without the annotation
	// core.rukpak.io/install-with are installed; "" is InstallWithApp.
	InstallWith InstallWith
	// MetricsAddr and ProbeAddr serve metrics and health probes ("0": off).
	MetricsAddr, ProbeAddr string
	LeaderElect            bool
	// Restartable lets a process start the adapter again after stopping
	// it (controller names must otherwise be unique in a process): tests.
	Restartable bool
}

// Scheme knows the kinds the adapter reads and writes.
func Scheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, rukpakv1alpha2.AddToScheme, kappctrlv1alpha1.AddToScheme,
		packagingv1alpha1.AddToScheme, datav1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("build scheme: %w", err)
		}
	}
	return scheme, nil
}

// NewManager builds the controller manager that runs the adapter against
// the cluster cfg points at: the command's `run` and the reconciler tests
// start exactly this.
func NewManager(cfg *rest.Config, o Options) (ctrl.Manager, error) {
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	// own are the namespaces the adapter reads Apps, Secrets and ConfigMaps
	// in: the system namespace, and the app namespaces Apps are spread over
	// (with their content Secrets and the copies of what they reference).
	own := map[string]cache.Config{o.Config.SystemNamespace: {}}
	for _, ns := range o.Config.AppNamespaces {
		own[ns] = cache.Config{}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress:  o.ProbeAddr,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        "rukpak-kapp.core.rukpak.io",
		LeaderElectionNamespace: o.Config.SystemNamespace,
		// The process exits as soon as the manager stops, so the lease can be
		// handed over at once: a rollout's new replica takes over without
		// waiting out the lease.
		LeaderElectionReleaseOnCancel: true,
		Controller:                    config.Controller{SkipNameValidation: &o.Restartable},
		Cache: cache.Options{
			ByObject: map[client.Object]cache.ByObject{
				// The adapter reads Apps in its own namespaces only.
				&kappctrlv1alpha1.App{}: {Namespaces: own},
				// And its PackageInstalls, in the serve mode.
				&packagingv1alpha1.PackageInstall{}: {Namespaces: own},
				// Secrets are never read elsewhere: what users reference comes
				// from the system namespace, the app namespaces hold only what
				// the adapter writes there.
				&corev1.Secret{}: {Namespaces: own},
				// configMaps sources, likewise.
				&corev1.ConfigMap{}: {Namespaces: own},
				// Installed workloads, for Healthy: only what a BundleDeployment installed.
				&appsv1.Deployment{}:  {Label: InstalledSelector},
				&appsv1.StatefulSet{}: {Label: InstalledSelector},
				&appsv1.DaemonSet{}:   {Label: InstalledSelector},
			},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("create manager: %w", err)
	}
	apis, err := ServedAPIs(cfg)
	if err != nil {
		return nil, err
	}
	r := NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), o.Config, o.Classes, mgr.GetEventRecorder(FieldOwner), apis)
	r.serve.installDefault = o.InstallWith
	if err := r.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("set up controller: %w", err)
	}
	if err := addDriftRepair(mgr, r.appKey); err != nil {
		return nil, err
	}
	if err := mgr.Add(drift.NewStallRepair(mgr.GetClient(), mgr.GetAPIReader(), mgr.GetCache(), mgr.GetEventRecorder(FieldOwner), o.Config.TemplateTimeout)); err != nil {
		return nil, fmt.Errorf("stall repair: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}
