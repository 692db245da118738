package translate

import (
	"encoding/json"
	"testing"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// FuzzApp feeds arbitrary BundleDeployment specs to the translation: it must
// never panic, and an App it returns must be complete.
func FuzzApp(f *testing.F) {
	f.Add(`{"installNamespace":"default","provisionerClassName":"core-rukpak-io-plain","source":{"type":"image","image":{"ref":"r/b:v1"}}}`, "")
	f.Add(`{"installNamespace":"x","provisionerClassName":"core-rukpak-io-plain","source":{"type":"image","image":{"ref":"r/b:v1","certificateData":"x","pullSecret":"s"}}}`, "sa")
	f.Add(`{"provisionerClassName":"core-rukpak-io-helm","source":{"type":"git","git":{"repository":"https://x","ref":{"branch":"main"}}}}`, "Bad Name")
	f.Add(`{"source":{"type":"image"}}`, "")
	f.Fuzz(func(t *testing.T, spec, sa string) {
		bd := &rukpakv1alpha2.BundleDeployment{}
		bd.Name = "fuzz"
		if err := json.Unmarshal([]byte(spec), &bd.Spec); err != nil {
			t.Skip()
		}
		if sa != "" {
			bd.Annotations = map[string]string{rukpakv1alpha2.AnnotationServiceAccount: sa}
		}
		app, err := App(bd, cfg, nil)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if len(app.Spec.Fetch) != 1 || len(app.Spec.Template) == 0 || len(app.Spec.Deploy) != 1 || app.Spec.ServiceAccountName == "" {
			t.Fatalf("incomplete App: %+v", app.Spec)
		}
	})
}
