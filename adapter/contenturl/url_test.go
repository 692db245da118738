package contenturl

import "testing"

func TestPathsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		name string
		path string
	}{
		{KindBundle, "combo-v1", "/bundles/combo-v1.tgz"},
		{KindBundle, "a.b.c", "/bundles/a.b.c.tgz"},
		{KindBundleDeployment, "combo", "/bundles/bundledeployments/combo.tgz"},
	} {
		if got := Path(tc.kind, tc.name); got != tc.path {
			t.Errorf("Path(%s, %s) = %s, want %s", tc.kind, tc.name, got, tc.path)
		}
		kind, name, ok := Parse(tc.path)
		if !ok || kind != tc.kind || name != tc.name {
			t.Errorf("Parse(%s) = %s %s %v", tc.path, kind, name, ok)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, p := range []string{
		"/bundles/", "/bundles/.tgz", "/bundles/x", "/bundles/x.tar.gz", "/other/x.tgz", "/bundles/../x.tgz",
		"/bundles/a/b.tgz", "/bundles/bundledeployments/.tgz", "/bundles/bundledeployments/a/b.tgz", "/bundles/UPPER.tgz",
	} {
		if kind, name, ok := Parse(p); ok {
			t.Errorf("Parse(%q) = %s %s, want a refusal", p, kind, name)
		}
	}
}

func TestFor(t *testing.T) {
	for _, tc := range []struct{ address, want string }{
		{"https://rukpak-kapp-webhook.rukpak-system.svc", "https://rukpak-kapp-webhook.rukpak-system.svc/bundles/b.tgz"},
		{"https://10.0.0.1:9443/", "https://10.0.0.1:9443/bundles/b.tgz"},
		{"", ""},
	} {
		if got := For(tc.address, KindBundle, "b"); got != tc.want {
			t.Errorf("For(%q) = %q, want %q", tc.address, got, tc.want)
		}
	}
}
