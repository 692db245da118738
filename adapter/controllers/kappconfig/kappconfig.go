package kappconfig

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
)

// ConfigReconciler keeps holder at what kapp-controller-config says.
type ConfigReconciler struct {
	reader    client.Reader
	namespace string
	holder    *fetch.NetworkHolder
	// serviceHost stands for KAPPCTRL_KUBERNETES_SERVICE_HOST in noProxy:
	// the API server's address, as kapp-controller's pod sees it.
	serviceHost string
	onChange    func(context.Context) error
	// applied is the digest of the data last stored; "" for none.
	applied string
}

// New follows kapp-controller-config in namespace (kapp-controller's),
// reading it through reader (the manager's cache, which holds only that
// name there), into holder; onChange runs after each change.
func New(reader client.Reader, namespace, serviceHost string, holder *fetch.NetworkHolder, onChange func(context.Context) error) *ConfigReconciler {
	return &ConfigReconciler{reader: reader, namespace: namespace, serviceHost: serviceHost, holder: holder, onChange: onChange}
}

// SetupWithManager watches the Secret and the ConfigMap of that name.
func (w *ConfigReconciler) SetupWithManager(mgr ctrl.Manager) error {
	only := builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == w.namespace && o.GetName() == fetch.KappControllerConfigName
	}))
	one := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: w.namespace, Name: fetch.KappControllerConfigName}}}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("kapp-controller-config").
		Watches(&corev1.Secret{}, one, only).
		Watches(&corev1.ConfigMap{}, one, only).
		// Every replica fetches: the leader for installs, each one for the
		// contentURLs it serves.
		// A read that fails backs off as every retry of the adapter.
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false),
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](fetch.RetryBase, fetch.RetryMax)}).
		Complete(w)
}

// Reconcile reads the Secret, else the ConfigMap, and stores what it says;
// with neither, fetches go back to the adapter's environment, as
// kapp-controller's do before it has read a config.
func (w *ConfigReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cfg, err := Read(ctx, w.reader, w.namespace)
	if err != nil {
		return reconcile.Result{}, err
	}
	source := cfg.Source()
	digest := digestOf(source, cfg.Data)
	if digest == w.applied {
		return reconcile.Result{}, nil
	}
	var n *fetch.Network
	if source != "" {
		n = fetch.ParseNetwork(source, cfg.Data, w.serviceHost)
	}
	w.holder.Store(n)
	// What it says, never its values: a proxy URL may carry a password.
	data := cfg.Data
	log.FromContext(ctx).Info("kapp-controller-config applied to the adapter's fetches", "from", source,
		"caCerts", data["caCerts"] != "", "httpProxy", data["httpProxy"] != "", "httpsProxy", data["httpsProxy"] != "",
		"noProxy", data["noProxy"] != "", "dangerousSkipTLSVerify", data["dangerousSkipTLSVerify"] != "", "problem", errText(n.Err()))
	if w.onChange != nil {
		if err := w.onChange(ctx); err != nil {
			// Not applied yet: the retry wakes them again.
			return reconcile.Result{}, fmt.Errorf("queue again what failed to unpack: %w", err)
		}
	}
	w.applied = digest
	return reconcile.Result{}, nil
}

// Config is kapp-controller-config as kapp-controller reads it.
type Config struct {
	// Kind is the kind of the object read, Secret or ConfigMap; "" when
	// neither exists.
	Kind      string
	Namespace string
	// ConfigMapIgnored says a ConfigMap of the name exists alongside the
	// Secret, which wins.
	ConfigMapIgnored bool
	Data             map[string]string
}

// Source names the object read ("the Secret NS/kapp-controller-config")
// in messages; "" when neither exists.
func (c Config) Source() string {
	if c.Kind == "" {
		return ""
	}
	return "the " + c.Kind + " " + c.Namespace + "/" + fetch.KappControllerConfigName
}

// Read reads kapp-controller-config in namespace through reader: the
// Secret, else the ConfigMap, as kapp-controller does. The adapter's watch
// and `rukpak-kapp check` both read it so.
func Read(ctx context.Context, reader client.Reader, namespace string) (Config, error) {
	key := client.ObjectKey{Namespace: namespace, Name: fetch.KappControllerConfigName}
	secret, cm := &corev1.Secret{}, &corev1.ConfigMap{}
	secretErr := reader.Get(ctx, key, secret)
	if secretErr != nil && !apierrors.IsNotFound(secretErr) {
		return Config{}, fmt.Errorf("get the Secret %s: %w", key, secretErr)
	}
	cmErr := reader.Get(ctx, key, cm)
	if cmErr != nil && !apierrors.IsNotFound(cmErr) {
		return Config{}, fmt.Errorf("get the ConfigMap %s: %w", key, cmErr)
	}
	switch {
	case secretErr == nil:
		data := map[string]string{}
		for k, v := range secret.Data {
			data[k] = string(v)
		}
		return Config{Kind: "Secret", Namespace: namespace, ConfigMapIgnored: cmErr == nil, Data: data}, nil
	case cmErr == nil:
		return Config{Kind: "ConfigMap", Namespace: namespace, Data: cm.Data}, nil
	}
	return Config{}, nil
}

func digestOf(from string, data map[string]string) string {
	if from == "" {
		return ""
	}
	h := sha256.New()
	h.Write([]byte(from))
	for _, k := range slices.Sorted(maps.Keys(data)) {
		fmt.Fprintf(h, "\x00%s\x00%s", k, data[k])
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
