package adapter

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
)

// TestManagerOptions: the cache reads the adapter's own namespaces, and of
// kapp-controller's namespace only kapp-controller-config.
func TestManagerOptions(t *testing.T) {
	tests := []struct {
		name         string
		o            Options
		namespaces   []string
		configOnlyIn string // the namespace where only kapp-controller-config is read; "": none
	}{
		{name: "the system namespace", o: Options{Config: translate.Config{SystemNamespace: "rukpak-system"}},
			namespaces: []string{"rukpak-system"}},
		{name: "app namespaces too", o: Options{Config: translate.Config{SystemNamespace: "rukpak-system", AppNamespaces: []string{"apps-0", "apps-1"}}},
			namespaces: []string{"rukpak-system", "apps-0", "apps-1"}},
		{name: "kapp-controller's namespace: its config alone", o: Options{Config: translate.Config{SystemNamespace: "rukpak-system"}, KappControllerNamespace: "kapp-controller"},
			namespaces: []string{"rukpak-system"}, configOnlyIn: "kapp-controller"},
		{name: "kapp-controller in the system namespace: everything there", o: Options{Config: translate.Config{SystemNamespace: "rukpak-system"}, KappControllerNamespace: "rukpak-system"},
			namespaces: []string{"rukpak-system"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, err := managerOptions(tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if len(opts.Cache.DefaultNamespaces) != len(tt.namespaces) {
				t.Errorf("default namespaces %v, want %v", opts.Cache.DefaultNamespaces, tt.namespaces)
			}
			for _, ns := range tt.namespaces {
				if _, ok := opts.Cache.DefaultNamespaces[ns]; !ok {
					t.Errorf("namespace %s not read", ns)
				}
			}
			if opts.LeaderElectionNamespace != tt.o.Config.SystemNamespace {
				t.Errorf("leader election in %q", opts.LeaderElectionNamespace)
			}
			for obj, by := range opts.Cache.ByObject {
				if _, ok := obj.(*corev1.Secret); !ok {
					continue
				}
				for ns, c := range by.Namespaces {
					onlyConfig := c.FieldSelector != nil && c.FieldSelector.String() == "metadata.name=kapp-controller-config"
					if onlyConfig != (ns == tt.configOnlyIn) {
						t.Errorf("Secrets of %s: field selector %v", ns, c.FieldSelector)
					}
				}
			}
			secrets := secretsByObject(opts.Cache)
			if tt.o.KappControllerNamespace == "" && secrets != nil {
				t.Errorf("without kapp-controller's namespace, Secrets are read per namespace: %v", secrets.Namespaces)
			}
			if tt.configOnlyIn != "" && (secrets == nil || secrets.Namespaces[tt.configOnlyIn].FieldSelector == nil) {
				t.Errorf("kapp-controller-config not read in %s", tt.configOnlyIn)
			}
		})
	}
}

func secretsByObject(c cache.Options) *cache.ByObject {
	for obj, by := range c.ByObject {
		if _, ok := obj.(*corev1.Secret); ok {
			return &by
		}
	}
	return nil
}

// TestWithContentAddress: contentURLs name the Service unless another
// address is given, and nothing when no webhook server would serve them.
func TestWithContentAddress(t *testing.T) {
	for _, tt := range []struct {
		webhook, given, want string
	}{
		{"", "", ""},
		{"0", "https://elsewhere", ""},
		{":9443", "", "https://rukpak-kapp-webhook.rukpak-system.svc"},
		{":9443", "https://elsewhere", "https://elsewhere"},
	} {
		o := withContentAddress(Options{WebhookAddr: tt.webhook, Config: translate.Config{SystemNamespace: "rukpak-system", ContentAddress: tt.given}})
		if o.Config.ContentAddress != tt.want {
			t.Errorf("webhook %q, given %q: %q, want %q", tt.webhook, tt.given, o.Config.ContentAddress, tt.want)
		}
	}
}
