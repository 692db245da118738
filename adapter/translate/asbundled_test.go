package translate

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func TestStyleOf(t *testing.T) {
	t.Parallel()
	app := func(annotations map[string]string) *kappctrlv1alpha1.App {
		return &kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Annotations: annotations}}
	}
	tests := []struct {
		name string
		live *kappctrlv1alpha1.App
		want Style
	}{
		{"no App yet: a new install is made as bundled", nil, StyleAsBundled},
		{"an App made before styles keeps kapp's label scoping", app(nil), StyleLabelScoped},
		{"an App made as bundled stays so", app(map[string]string{AnnotationStyle: "as-bundled"}), StyleAsBundled},
		{"an unknown style is treated as the old one, which changes nothing installed", app(map[string]string{AnnotationStyle: "future"}), StyleLabelScoped},
		{"an as-bundled App that lost its annotation is still told by its template", &kappctrlv1alpha1.App{Spec: kappctrlv1alpha1.AppSpec{Template: []kappctrlv1alpha1.AppTemplate{
			{HelmTemplate: &kappctrlv1alpha1.AppTemplateHelmTemplate{}},
			{Ytt: &kappctrlv1alpha1.AppTemplateYtt{Inline: &kappctrlv1alpha1.AppFetchInline{Paths: map[string]string{asBundledFile: asBundledOverlay}}}},
		}}}, StyleAsBundled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := StyleOf(tt.live); got != tt.want {
				t.Errorf("StyleOf = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAppInStyle(t *testing.T) {
	t.Parallel()
	helmContent := &Packed{Secrets: []ContentSecret{{Name: "c-1", Dir: "chart"}}}
	tests := []struct {
		name    string
		bd      *rukpakv1alpha2.BundleDeployment
		content *Packed
		// step is the template step that carries the kapp configuration.
		step int
	}{
		{"plain", bd(rukpakv1alpha2.ClassPlain, imageSource(rukpakv1alpha2.ImageSource{Ref: "r/b:v1"})), nil, 0},
		{"registry+v1", bd(rukpakv1alpha2.ClassRegistry, imageSource(rukpakv1alpha2.ImageSource{Ref: "r/b:v1"})), &Packed{Secrets: []ContentSecret{{Name: "c-1", Dir: "manifests"}}}, 0},
		{"helm: the ytt step after helm template", bd(rukpakv1alpha2.ClassHelm, imageSource(rukpakv1alpha2.ImageSource{Ref: "r/c:v1"})), helmContent, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			legacy, err := App(tt.bd, cfg, tt.content)
			if err != nil {
				t.Fatal(err)
			}
			scoped, err := AppInStyle(tt.bd, cfg, tt.content, StyleLabelScoped)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(legacy, scoped); diff != "" {
				t.Errorf("a label-scoped App must be exactly the App made before styles (-before +label-scoped):\n%s", diff)
			}

			got, err := AppInStyle(tt.bd, cfg, tt.content, StyleAsBundled)
			if err != nil {
				t.Fatal(err)
			}
			if got.Annotations[AnnotationStyle] != "as-bundled" {
				t.Errorf("annotations = %v, want the style marked", got.Annotations)
			}
			if StyleOf(got) != StyleAsBundled {
				t.Errorf("StyleOf(the App it made) = %q", StyleOf(got))
			}
			// Everything but the carrying ytt step is the label-scoped App's.
			want := legacy.DeepCopy()
			want.Annotations = got.Annotations
			y := want.Spec.Template[tt.step].Ytt
			y.Inline.Paths[asBundledFile] = asBundledOverlay
			y.Inline.Paths[ownerReferencesFile] = ownerReferencesConfig
			y.FileMarks = append(y.FileMarks, asBundledFile+":type=yaml-template")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("as-bundled App (-want +got):\n%s", diff)
			}
			if _, kept := got.Spec.Template[tt.step].Ytt.Inline.Paths[kappConfigFile]; !kept {
				t.Error("the owner labels configuration was dropped")
			}
		})
	}
}

func TestAppInStyle_Idempotent(t *testing.T) {
	t.Parallel()
	b := bd(rukpakv1alpha2.ClassPlain, imageSource(rukpakv1alpha2.ImageSource{Ref: "r/b:v1"}))
	app, err := AppInStyle(b, cfg, nil, StyleAsBundled)
	if err != nil {
		t.Fatal(err)
	}
	if err := addTemplateFiles(app, map[string]string{asBundledFile: asBundledOverlay}, asBundledFile); err != nil {
		t.Fatal(err)
	}
	marks := app.Spec.Template[0].Ytt.FileMarks
	if want := []string{"**/*:type=yaml-plain", asBundledFile + ":type=yaml-template"}; !cmp.Equal(marks, want) {
		t.Errorf("file marks = %q, want %q (a mark is added once)", marks, want)
	}
}

func TestAddTemplateFiles_NoYttStep(t *testing.T) {
	t.Parallel()
	app := &kappctrlv1alpha1.App{Spec: kappctrlv1alpha1.AppSpec{Template: []kappctrlv1alpha1.AppTemplate{{HelmTemplate: &kappctrlv1alpha1.AppTemplateHelmTemplate{}}}}}
	if err := addTemplateFiles(app, map[string]string{"x.yml": ""}); err == nil {
		t.Fatal("an App without a ytt step was accepted; the configuration would be lost")
	}
}

// The values an overlay writes travel as one JSON document inside a
// Starlark string: whatever a name holds, it decodes to itself.
func TestMetadataOverlay_ValuesRoundTrip(t *testing.T) {
	t.Parallel()
	yes := true
	annotations := map[string]string{"a": `quote " backslash \ newline` + "\n" + `#@ load("x")`}
	labels := map[string]string{"l": "v"}
	refs := []metav1.OwnerReference{{APIVersion: "core.rukpak.io/v1alpha2", Kind: "BundleDeployment", Name: "bd", UID: "u-1", Controller: &yes}}
	overlay := metadataOverlay(annotations, labels, refs)

	var line string
	for _, l := range strings.Split(overlay, "\n") {
		if strings.HasPrefix(l, "#@ add = json.decode(") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no values line in:\n%s", overlay)
	}
	quoted := strings.TrimSuffix(strings.TrimPrefix(line, "#@ add = json.decode("), ")")
	raw, err := strconv.Unquote(quoted)
	if err != nil {
		t.Fatalf("values are not one quoted string: %v", err)
	}
	var got struct {
		Annotations     map[string]string       `json:"annotations"`
		Labels          map[string]string       `json:"labels"`
		OwnerReferences []metav1.OwnerReference `json:"ownerReferences"`
	}
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal(got.Annotations, annotations) || !cmp.Equal(got.Labels, labels) || !cmp.Equal(got.OwnerReferences, refs) {
		t.Errorf("values did not round-trip: %+v", got)
	}
	if strings.Count(overlay, "\n#@ add = ") != 1 {
		t.Error("a value broke out of its line")
	}
}
