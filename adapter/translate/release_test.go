package translate

import (
	"strings"
	"testing"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// live is an App as the API server returns it: status, server fields.
func live(t *testing.T, style Style) *kappctrlv1alpha1.App {
	t.Helper()
	b := bd(rukpakv1alpha2.ClassPlain, imageSource(rukpakv1alpha2.ImageSource{Ref: "r/b:v1"}))
	app, err := AppInStyle(b, cfg, nil, style)
	if err != nil {
		t.Fatal(err)
	}
	app.UID, app.ResourceVersion, app.Generation = "app-uid", "42", 3
	app.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "rukpak-kapp"}}
	app.Finalizers = []string{"finalizers.kapp-ctrl.k14s.io/delete", "example.com/other"}
	app.Status.ObservedGeneration = 3
	return app
}

func TestReleased(t *testing.T) {
	t.Parallel()
	b := bd(rukpakv1alpha2.ClassPlain, imageSource(rukpakv1alpha2.ImageSource{Ref: "r/b:v1"}))
	b.Spec.InstallNamespace = "apps"
	for _, style := range []Style{StyleAsBundled, StyleLabelScoped} {
		t.Run(string(style), func(t *testing.T) {
			t.Parallel()
			in := live(t, style)
			in.Spec.Canceled = true
			before := in.DeepCopy()
			got, err := Released(in, b, true)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before, in); diff != "" {
				t.Errorf("the live App was modified:\n%s", diff)
			}
			if !got.Spec.NoopDelete {
				t.Error("noopDelete is not set: deleting the App would delete everything it installed")
			}
			if got.Annotations[AnnotationReleased] != ReleasedAdoptable {
				t.Errorf("annotations = %v", got.Annotations)
			}
			if got.UID != "" || got.ResourceVersion != "" || got.ManagedFields != nil || got.Status.ObservedGeneration != 0 {
				t.Errorf("server-set fields kept, an apply would be refused: %+v", got.ObjectMeta)
			}
			if diff := cmp.Diff([]string{KappControllerFinalizer}, got.Finalizers); diff != "" {
				t.Errorf("the adapter's apply would drop kapp-controller's finalizer (-want +got):\n%s", diff)
			}
			y := got.Spec.Template[0].Ytt
			overlay := y.Inline.Paths[releaseFile]
			for _, want := range []string{`\"app.kubernetes.io/managed-by\":\"Helm\"`, `\"meta.helm.sh/release-name\":\"my-bd\"`, `\"meta.helm.sh/release-namespace\":\"apps\"`, `\"uid\":\"uid-1\"`, `\"controller\":true`, `\"blockOwnerDeletion\":true`} {
				if !strings.Contains(overlay, want) {
					t.Errorf("release overlay lacks %s", want)
				}
			}
			if !strings.Contains(strings.Join(y.FileMarks, ","), releaseFile+":type=yaml-template") {
				t.Errorf("release overlay is not evaluated: file marks %q", y.FileMarks)
			}
			if y.Inline.Paths[ownerReferencesFile] != ownerReferencesConfig {
				t.Error("without the owner reference rule kapp keeps the cluster's owner references over the overlay's")
			}
			// Fetch and everything else stay, so nothing else changes; kapp
			// does not wait for readiness, and a canceled deploy runs again.
			want := before.Spec.DeepCopy()
			want.NoopDelete, want.Canceled = true, false
			want.Deploy[0].Kapp.RawOptions = append(want.Deploy[0].Kapp.RawOptions, "--wait=false")
			want.Template[0].Ytt.Inline.Paths = y.Inline.Paths
			want.Template[0].Ytt.FileMarks = y.FileMarks
			if diff := cmp.Diff(*want, got.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if StyleOf(got) != style {
				t.Errorf("the release changed the App's style to %s", StyleOf(got))
			}
		})
	}
}

func TestReleased_InPlace(t *testing.T) {
	t.Parallel()
	b := bd(rukpakv1alpha2.ClassPlain, imageSource(rukpakv1alpha2.ImageSource{Ref: "r/b:v1"}))
	in := live(t, StyleAsBundled)
	got, err := Released(in, b, false)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Spec.NoopDelete || got.Annotations[AnnotationReleased] != ReleasedInPlace {
		t.Errorf("noopDelete = %v, annotations = %v", got.Spec.NoopDelete, got.Annotations)
	}
	want := in.Spec.DeepCopy()
	want.NoopDelete = true
	if diff := cmp.Diff(*want, got.Spec); diff != "" {
		t.Errorf("only noopDelete may change when the objects are not made adoptable (-want +got):\n%s", diff)
	}
}
