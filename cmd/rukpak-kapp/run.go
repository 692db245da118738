package main

import (
	"flag"
	"fmt"
	"strings"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func run(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	systemNamespace := fs.String("system-namespace", "rukpak-system", "namespace of the Apps and of every Secret or ConfigMap a BundleDeployment may reference")
	installer := fs.String("installer-service-account", "rukpak-kapp-installer", "ServiceAccount in the system namespace that kapp deploys with")
	syncPeriod := fs.Duration("app-sync-period", 10*time.Minute, "how often kapp-controller re-applies an unchanged App")
	branchSync := fs.Duration("branch-sync-period", time.Minute, "how often a BundleDeployment that tracks a git branch looks for new commits")
	templateTimeout := fs.Duration("template-timeout", 2*time.Minute, "how long kapp-controller's template step may run before the BundleDeployment reports it as failed (0 disables)")
	classes := fs.String("classes", rukpakv1alpha2.ClassPlain+","+rukpakv1alpha2.ClassHelm+","+rukpakv1alpha2.ClassRegistry, "comma-separated provisioner classes this controller claims; NAME="+rukpakv1alpha2.ClassPlain+" claims NAME and installs it as that built-in class, to run beside rukpak")
	metricsAddr := fs.String("metrics-bind-address", ":8080", `metrics address ("0" disables)`)
	probeAddr := fs.String("health-probe-bind-address", ":8081", `health probe address ("0" disables)`)
	leaderElect := fs.Bool("leader-elect", false, "elect a leader so only one replica reconciles")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	claimed, err := adapter.ParseClasses(splitList(*classes))
	if err != nil {
		return fmt.Errorf("--classes: %w", err)
	}

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, rukpakv1alpha2.AddToScheme, kappctrlv1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return fmt.Errorf("build scheme: %w", err)
		}
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: *metricsAddr},
		HealthProbeBindAddress:  *probeAddr,
		LeaderElection:          *leaderElect,
		LeaderElectionID:        "rukpak-kapp.core.rukpak.io",
		LeaderElectionNamespace: *systemNamespace,
		Cache: cache.Options{
			// The adapter only ever reads Apps in its own namespace.
			ByObject: map[client.Object]cache.ByObject{
				&kappctrlv1alpha1.App{}: {Namespaces: map[string]cache.Config{*systemNamespace: {}}},
				// Secrets are read from the system namespace only, never elsewhere.
				&corev1.Secret{}: {Namespaces: map[string]cache.Config{*systemNamespace: {}}},
				// configMaps sources, likewise.
				&corev1.ConfigMap{}: {Namespaces: map[string]cache.Config{*systemNamespace: {}}},
				// Installed workloads, for Healthy: only what a BundleDeployment installed.
				&appsv1.Deployment{}:  {Label: adapter.InstalledSelector},
				&appsv1.StatefulSet{}: {Label: adapter.InstalledSelector},
				&appsv1.DaemonSet{}:   {Label: adapter.InstalledSelector},
			},
		},
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	r := adapter.NewReconciler(mgr.GetClient(), translate.Config{
		SystemNamespace:    *systemNamespace,
		ServiceAccountName: *installer,
		SyncPeriod:         *syncPeriod,
		BranchSyncPeriod:   *branchSync,
		TemplateTimeout:    *templateTimeout,
	}, claimed, mgr.GetEventRecorder(adapter.FieldOwner))
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up controller: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
