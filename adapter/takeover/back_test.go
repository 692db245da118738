package takeover

import (
	"strings"
	"testing"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

func TestBack(t *testing.T) {
	t.Parallel()
	asBundled := &kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Name: "bd", Annotations: map[string]string{translate.AnnotationStyle: string(translate.StyleAsBundled)}}}
	labelScoped := &kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Name: "bd"}}
	// kappInstalled is a Deployment as an as-bundled App leaves it.
	kappInstalled := func(mutate ...func(*unstructured.Unstructured)) *unstructured.Unstructured {
		u := rendered(t, depYAML)
		u.SetLabels(map[string]string{"app": "web", "kapp.k14s.io/app": "1", "kapp.k14s.io/association": "v1.x", rukpakv1alpha2.LabelOwnerKind: "BundleDeployment", rukpakv1alpha2.LabelOwnerName: "bd"})
		u.SetAnnotations(map[string]string{"kapp.k14s.io/identity": "i"})
		for _, m := range mutate {
			m(u)
		}
		return u
	}
	scoped := func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedStringMap(u.Object, map[string]string{"app": "web", "kapp.k14s.io/app": "1"}, "spec", "selector", "matchLabels")
	}

	bundle := rendered(t, depYAML)
	job := rendered(t, "apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate, namespace: apps}\nspec:\n  template:\n    spec: {containers: [{name: m, image: m:v1}], restartPolicy: Never}\n")
	jobLive := job.DeepCopy()
	_ = unstructured.SetNestedField(jobLive.Object, "m:v2", "spec", "template", "spec", "containers", "0", "image")
	containers, _, _ := unstructured.NestedSlice(jobLive.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["image"] = "m:v2"
	_ = unstructured.SetNestedSlice(jobLive.Object, containers, "spec", "template", "spec", "containers")
	otherSelector := rendered(t, strings.Replace(depYAML, "selector: {matchLabels: {app: web}}", "selector: {matchLabels: {app: other}}", 1))

	tests := []struct {
		name          string
		app           *kappctrlv1alpha1.App
		live          []*unstructured.Unstructured
		expected      []*unstructured.Unstructured
		chart         map[string][]byte
		wantAdoptable bool
		wantReasons   []string
		wantObjects   []ObjectChange
	}{
		{
			name: "as bundled: kapp puts Helm's ownership and the controller reference back", app: asBundled,
			live: []*unstructured.Unstructured{kappInstalled()}, expected: []*unstructured.Unstructured{bundle},
			wantAdoptable: true,
			wantObjects: []ObjectChange{{
				Ref: Ref{Group: "apps", Kind: "Deployment", Namespace: "apps", Name: "web"}, Action: "release",
				Labels:          MapChange{Added: map[string]string{"app.kubernetes.io/managed-by": "Helm"}},
				Annotations:     MapChange{Added: map[string]string{"meta.helm.sh/release-name": "bd", "meta.helm.sh/release-namespace": "apps"}},
				OwnerReferences: MapChange{Added: map[string]string{"BundleDeployment.core.rukpak.io/v1alpha2/bd": "uid bd-uid, controller"}},
			}},
		},
		{
			name: "label scoped: kapp's extra selector label is no conflict, Helm only adds", app: labelScoped,
			live: []*unstructured.Unstructured{kappInstalled(scoped)}, expected: []*unstructured.Unstructured{bundle},
			wantAdoptable: true,
			wantReasons:   []string{"kapp's label stays in workload selectors"},
		},
		{
			name: "a selector rukpak renders otherwise is left in place, not made adoptable", app: asBundled,
			live: []*unstructured.Unstructured{kappInstalled()}, expected: []*unstructured.Unstructured{otherSelector},
			wantReasons: []string{"Deployment.apps apps/web: rukpak renders .spec.selector differently"},
		},
		{
			name: "a Job template rukpak renders otherwise is left in place", app: asBundled,
			live: []*unstructured.Unstructured{jobLive}, expected: []*unstructured.Unstructured{job},
			wantReasons: []string{"Job.batch apps/migrate: rukpak renders .spec.template differently"},
		},
		{
			name: "unknown rendering with a chart rukpak renders differently: adoptable with a warning", app: asBundled,
			live: []*unstructured.Unstructured{kappInstalled()}, chart: map[string][]byte{"templates/job.yaml": []byte("{{ now }}")},
			wantAdoptable: true,
			wantReasons:   []string{"check before moving back: chart template templates/job.yaml uses now"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := Back(testBD(rukpakv1alpha2.ClassPlain), tt.app, tt.live, tt.expected, tt.chart)
			if h.Adoptable != tt.wantAdoptable {
				t.Errorf("adoptable = %v, reasons %q", h.Adoptable, h.Reasons)
			}
			if len(h.Reasons) != len(tt.wantReasons) {
				t.Fatalf("reasons = %q, want %d", h.Reasons, len(tt.wantReasons))
			}
			for i, w := range tt.wantReasons {
				if !strings.Contains(h.Reasons[i], w) {
					t.Errorf("reason %d = %q, want it to contain %q", i, h.Reasons[i], w)
				}
			}
			if !tt.wantAdoptable && h.Objects != nil {
				t.Errorf("objects not made adoptable still get changes: %+v", h.Objects)
			}
			if tt.wantObjects == nil {
				return
			}
			if diff := cmp.Diff(tt.wantObjects, h.Objects); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}
