package cmd

import (
	goflag "flag"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/webhooks"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/webhooks/crdsafety"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/cmd/rukpak-kapp/client"
)

func newRunCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use: "run",
		Example: `  # against the cluster of the current kubeconfig context
  rukpak-kapp run --leader-elect=true
  # with Apps spread over two namespaces, each served by its own kapp-controller
  rukpak-kapp run --app-namespaces rukpak-apps-0,rukpak-apps-1`,
		Short: "Run the controller against the cluster of --kubeconfig, $KUBECONFIG or the in-cluster config",
		Args:  cobra.NoArgs,
	}
	fs := cmd.Flags()
	systemNamespace := fs.String("system-namespace", "rukpak-system", "namespace of the Apps and of every Secret or ConfigMap a BundleDeployment may reference")
	appNamespaces := fs.String("app-namespaces", "", "comma-separated namespaces to spread the Apps over, each served by a kapp-controller scoped to it (-namespace); empty: all Apps in the system namespace. "+
		"Apps that exist stay where they are. The adapter copies the Secrets and ConfigMaps a BundleDeployment names from the system namespace into its App's namespace; the installer ServiceAccount must exist in each")
	installer := fs.String("installer-service-account", "rukpak-kapp-installer", "ServiceAccount in the system namespace that kapp deploys with")
	syncPeriod := fs.Duration("app-sync-period", 10*time.Minute, "how often kapp-controller re-applies an unchanged App")
	branchSync := fs.Duration("branch-sync-period", time.Minute, "how often a BundleDeployment that tracks a git branch looks for new commits")
	templateTimeout := fs.Duration("template-timeout", 2*time.Minute, "how long kapp-controller's template step may run before the BundleDeployment reports it as failed (0 disables)")
	stepHealthTimeout := fs.Duration("upgrade-step-health-timeout", 5*time.Minute, "how long a step of an upgrade along a catalog channel may keep installed objects that are not Current before the walk stops there (0 waits without a bound)")
	classes := fs.String("classes", rukpakv1alpha2.ClassPlain+","+rukpakv1alpha2.ClassHelm+","+rukpakv1alpha2.ClassRegistry, "comma-separated provisioner classes this controller claims; NAME="+rukpakv1alpha2.ClassPlain+" claims NAME and installs it as that built-in class, to run alongside rukpak")
	metricsAddr := fs.String("metrics-bind-address", ":8080", `metrics address ("0" disables)`)
	probeAddr := fs.String("health-probe-bind-address", ":8081", `health probe address ("0" disables)`)
	webhookAddr := fs.String("webhook-bind-address", webhooks.DefaultAddress, `address of the adapter's webhooks (the CRD upgrade safety check, the BundleDeployment conversion), which the API server reaches through the Service `+webhooks.DefaultService+` ("0" disables; then remove the ValidatingWebhookConfiguration `+crdsafety.ConfigurationName+`, whose failure policy is Fail)`)
	installWith := fs.String("install-with", string(adapter.InstallWithApp), "how BundleDeployments are installed: app (a kapp-controller App) or packageinstall (a Carvel Package the adapter publishes, installed by a PackageInstall); the annotation "+rukpakv1alpha2.AnnotationInstallWith+" wins")
	kcNamespace := fs.String("kapp-controller-namespace", "kapp-controller", "kapp-controller's namespace: the adapter's own fetches (Bundles on their own, registry+v1 and helm bundles, the take-over) trust the CAs and use the proxies of its "+fetch.KappControllerConfigName+" there (the Secret, else the ConfigMap), as kapp-controller's do, and follow its changes; empty: read none, use the adapter's environment")
	globalNS := fs.String("packaging-global-namespace", adapter.PackagingGlobalNamespace, "kapp-controller's -packaging-global-namespace (set it to the same value; \"\" when kapp-controller runs without it): the catalog Packages there are seen from every namespace, as kapp-controller shows them, for catalog bundles' dependencies, update notices, walks and the upgrade webhook")
	leaderElect := fs.Bool("leader-elect", false, "elect a leader so only one replica reconciles")
	contentAddress := fs.String("content-address", "", "where clients reach the webhook server, which serves the content of every unpacked Bundle and BundleDeployment at its status.contentURL (<address>/bundles/...); empty: "+adapter.DefaultContentAddress("<system-namespace>"))
	contentDir := fs.String("content-dir", "", "directory that keeps the content served at contentURLs, emptied at start (in the Deployment: an emptyDir); empty: a new directory under the temporary directory, removed at exit")
	catalogDir := fs.String("catalog-dir", "", "directory that keeps the catalog images OperatorCatalogs publish, as read (one file each while it is their last: about the size of the catalog's files; in the Deployment: an emptyDir); empty: a new directory under the temporary directory, removed at exit")
	spoolMax := fs.String("catalog-spool-max-bytes", resource.NewQuantity(adapter.DefaultCatalogSpoolMaxBytes, resource.BinarySI).String(), "how much the catalogs --catalog-dir keeps may hold together (a quantity; the Deployment's emptyDir is 2Gi); a catalog that does not fit with the others is retried with backoff, one over it alone is refused, each naming this flag")
	contentMax := fs.String("content-max-bytes", resource.NewQuantity(adapter.DefaultContentMaxBytes, resource.BinarySI).String(), "how much content --content-dir may hold (a quantity: 512Mi); a Bundle whose content does not fit with the others unpacked here fails until some are deleted")
	qps := fs.Float64("kube-api-qps", 50, "requests a second the adapter may send to kube-apiserver (client-side limit; controller-runtime's default, 20, is what bounds an install of many BundleDeployments on sharded kapp-controllers)")
	burst := fs.Int("kube-api-burst", 100, "requests the adapter may send at once above --kube-api-qps")
	kube := kubeconfigFlags(cmd)
	zapOpts := zap.Options{}
	zapFlags := goflag.NewFlagSet("zap", goflag.ContinueOnError)
	zapOpts.BindFlags(zapFlags)
	fs.AddGoFlagSet(zapFlags)
	cmd.RunE = func(*cobra.Command, []string) error {
		// A flag value that is not understood is a usage error, said
		// before the controller logs that it starts.
		claimed, err := adapter.ParseClasses(client.SplitList(*classes))
		if err != nil {
			return usageError{fmt.Errorf("--classes: %w", err)}
		}
		mode, err := adapter.ParseInstallWith(*installWith)
		if err != nil {
			return usageError{fmt.Errorf("--install-with: %w", err)}
		}
		maxSpool, err := resource.ParseQuantity(*spoolMax)
		if err != nil || maxSpool.Value() <= 0 {
			return usageError{fmt.Errorf("--catalog-spool-max-bytes %q: give a positive quantity such as 1536Mi", *spoolMax)}
		}
		maxContent, err := resource.ParseQuantity(*contentMax)
		if err != nil || maxContent.Value() <= 0 {
			return usageError{fmt.Errorf("--content-max-bytes %q: give a positive quantity such as 512Mi", *contentMax)}
		}
		ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
		ctrl.Log.WithName("setup").Info("starting rukpak-kapp", "version", versionString())
		cfg, err := kube.ToRESTConfig()
		if err != nil {
			return fmt.Errorf("load kubeconfig: %w", err)
		}
		cfg.QPS, cfg.Burst = float32(*qps), *burst
		mgr, err := adapter.NewManager(cfg, adapter.Options{
			Config: translate.Config{
				SystemNamespace:    *systemNamespace,
				AppNamespaces:      client.SplitList(*appNamespaces),
				ServiceAccountName: *installer,
				SyncPeriod:         *syncPeriod,
				BranchSyncPeriod:   *branchSync,
				TemplateTimeout:    *templateTimeout,
				StepHealthTimeout:  *stepHealthTimeout,
				ContentAddress:     *contentAddress,
			},
			Classes:                  claimed,
			InstallWith:              mode,
			MetricsAddr:              *metricsAddr,
			ProbeAddr:                *probeAddr,
			WebhookAddr:              *webhookAddr,
			LeaderElect:              *leaderElect,
			ContentDir:               *contentDir,
			CatalogDir:               *catalogDir,
			ContentMaxBytes:          maxContent.Value(),
			CatalogSpoolMaxBytes:     maxSpool.Value(),
			KappControllerNamespace:  *kcNamespace,
			PackagingGlobalNamespace: *globalNS,
		})
		if err != nil {
			return err
		}
		return mgr.Start(ctrl.SetupSignalHandler())
	}
	return cmd
}
