package templates

import (
	"encoding/json"
	"strings"
	"testing"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
)

// The hashes rukpak v0.16.0 gives these templates: its own
// api/v1alpha1.BundleTemplate (with apimachinery v0.26.10) decoded from
// the JSON and hashed the way its internal/util.DeepHashObject does.
func TestTemplateHashIsRukpaks(t *testing.T) {
	for _, tc := range []struct{ template, hash string }{
		{`{"spec":{"provisionerClassName":"core-rukpak-io-plain","source":{"type":"image","image":{"ref":"testdata/bundles/plain-v0:valid"}}}}`,
			"1tgkjv29ywbktt5yv6o920a54bwp7u3sjttxr216brsb"},
		{`{"metadata":{"labels":{"app":"my-bundle"}},"spec":{"provisionerClassName":"core-rukpak-io-registry","source":{"type":"image","image":{"ref":"my-bundle@sha256:xyz123","pullSecret":"pull"}}}}`,
			"sv9rmqoznrs144j5e8gjicz4bq7uuhbm950bwwkm3ma"},
		{`{"metadata":{"name":"n","namespace":"ns","labels":{"b":"2","a":"<&>"},"annotations":{"x":"ÿ\u2028"},"finalizers":["f1","f2"]},"spec":{"provisionerClassName":"core-rukpak-io-helm","source":{"type":"git","git":{"repository":"https://github.com/helm/examples","directory":"./charts","ref":{"branch":"main"},"auth":{"secret":{"name":"s"},"insecureSkipVerify":true}}}}}`,
			"xwx5epmw7sdh11gbc2359lhjcxg988ifpdtnuwzw92e"},
		{`{"spec":{"provisionerClassName":"core-rukpak-io-plain","source":{"type":"configMaps","configMaps":[{"configMap":{"name":"a"},"path":"manifests"},{"configMap":{"name":"b"}}]}}}`,
			"1qfucvd731h6h9veka5g98odh88uz1fzg99thkdmdq1a"},
		{`{"spec":{"provisionerClassName":"core-rukpak-io-plain","source":{"type":"upload","upload":{}}}}`,
			"2in3qgw1ftzr3p2o0gxf60vi5pjqpnkk59bay0wa159e"},
		{`{"spec":{"provisionerClassName":"core-rukpak-io-helm","source":{"type":"http","http":{"url":"https://github.com/helm/examples/releases/download/hello-world-0.1.0/hello-world-0.1.0.tgz"}}}}`,
			"xlv7j01emky5gws186x6piuwg6yzt3q52lfx9bh9j4h"},
		{`{"spec":{"provisionerClassName":"core-rukpak-io-plain","source":{"type":"git","git":{"repository":"ssh://git@local-git.rukpak-e2e.svc.cluster.local:2222/git-server/repos/combo","ref":{"tag":"v0.0.1"}}}}}`,
			"1mqtwba95ce1lv3yfeprway5zcvp7oejesw8a5qgu0zk"},
	} {
		var tmpl rukpakv1alpha1.BundleTemplate
		if err := json.Unmarshal([]byte(tc.template), &tmpl); err != nil {
			t.Fatal(err)
		}
		if got := TemplateHash(tmpl); got != tc.hash {
			t.Errorf("TemplateHash(%s) = %s, rukpak v0.16.0 says %s", tc.template, got, tc.hash)
		}
	}
}

func TestTemplateHashIgnoresEmptyAndOrder(t *testing.T) {
	var a, b rukpakv1alpha1.BundleTemplate
	_ = json.Unmarshal([]byte(`{"metadata":{"labels":{"x":"1","y":"2"}},"spec":{"provisionerClassName":"p","source":{"type":"git","git":{"repository":"r","ref":{"tag":"t"}}}}}`), &a)
	_ = json.Unmarshal([]byte(`{"metadata":{"annotations":{},"labels":{"y":"2","x":"1"},"finalizers":[]},"spec":{"source":{"git":{"ref":{"tag":"t"},"repository":"r"},"type":"git","configMaps":[]},"provisionerClassName":"p"}}`), &b)
	if TemplateHash(a) != TemplateHash(b) {
		t.Error("the same template, written differently, must hash the same (rukpak's encoding omits empty fields and sorts keys)")
	}
	b.Labels["z"] = "3"
	if TemplateHash(a) == TemplateHash(b) {
		t.Error("a label change is a new template")
	}
}

func TestBundleName(t *testing.T) {
	hash := "1tgkjv29ywbktt5yv6o920a54bwp7u3sjttxr216brsb"
	for _, tc := range []struct{ bd, want string }{
		{"plain", "plain-" + hash},
		{"a-six-", "a-six--" + hash}, // 7 + 44 = 51 characters: nothing cut
		{strings.Repeat("b", 10), strings.Repeat("b", 10) + "-" + hash[:41]},
		{strings.Repeat("c", 45), strings.Repeat("c", 45) + "-" + hash[:6]},
		{strings.Repeat("d", 50), strings.Repeat("d", 45) + "-" + hash[:6]},
	} {
		got := BundleName(tc.bd, hash)
		if got != tc.want {
			t.Errorf("BundleName(%q) = %q, want %q", tc.bd, got, tc.want)
		}
		if len(got) > rukpakv1alpha1.MaxBundleNameLength {
			t.Errorf("BundleName(%q) has %d characters", tc.bd, len(got))
		}
	}
}
