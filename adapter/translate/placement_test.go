package translate

import (
	"fmt"
	"testing"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func TestPlacement(t *testing.T) {
	t.Parallel()
	sharded := Config{SystemNamespace: "rukpak-system", AppNamespaces: []string{"rukpak-apps-0", "rukpak-apps-1"}}
	tests := []struct {
		name string
		cfg  Config
		bd   string
		want string
	}{
		{"not sharded: the system namespace", Config{SystemNamespace: "rukpak-system"}, "my-bd", "rukpak-system"},
		{"sharded", sharded, "my-bd", "rukpak-apps-0"},
		{"sharded, another name", sharded, "b2", "rukpak-apps-1"},
		{"one app namespace", Config{SystemNamespace: "rukpak-system", AppNamespaces: []string{"apps"}}, "my-bd", "apps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Placement(tt.cfg, tt.bd); got != tt.want {
				t.Errorf("Placement(%q) = %q, want %q", tt.bd, got, tt.want)
			}
		})
	}
}

func TestPlacementSpreads(t *testing.T) {
	t.Parallel()
	cfg := Config{SystemNamespace: "rukpak-system", AppNamespaces: []string{"a", "b", "c", "d"}}
	count := map[string]int{}
	for i := range 1000 {
		count[Placement(cfg, fmt.Sprintf("rk-%04d", i))]++
	}
	for _, ns := range cfg.AppNamespaces {
		if count[ns] < 200 || count[ns] > 300 {
			t.Errorf("%s holds %d of 1000 Apps, want about 250: %v", ns, count[ns], count)
		}
	}
}

func TestApp_Namespace(t *testing.T) {
	t.Parallel()
	b := bd(rukpakv1alpha2.ClassPlain, imageSource(rukpakv1alpha2.ImageSource{Ref: "r/b:v1"}))
	c := cfg
	c.AppNamespaces = []string{"rukpak-apps-0", "rukpak-apps-1"}
	c.AppNamespace = "rukpak-apps-1"
	app, err := App(b, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if app.Namespace != "rukpak-apps-1" {
		t.Errorf("App namespace = %q, want the one the reconciler chose", app.Namespace)
	}
	c.AppNamespace = ""
	if app, _ := App(b, c, nil); app.Namespace != "rukpak-system" {
		t.Errorf("App namespace without a choice = %q, want the system namespace", app.Namespace)
	}
}
