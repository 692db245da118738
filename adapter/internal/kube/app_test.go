package kube

import (
	"context"
	"testing"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

// ApplyApp writes only an App that differs from the live one; what
// others add to the App (kapp-controller's own labels and annotations)
// is no difference.
func TestApplyAppWritesOnlyAChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k := fakekube.New(nil)
	bd := imageBD("web")
	desired := desiredApp(t, bd)

	applied, err := ApplyApp(ctx, k.Client, desired, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := k.Wrote(); !cmp.Equal(got, []string{"apply App " + appNS + "/web"}) {
		t.Fatalf("first apply wrote %v", got)
	}
	if applied.Spec.Fetch[0].Image.URL != bd.Spec.Source.Image.Ref || applied.ResourceVersion == "" {
		t.Errorf("ApplyApp returned %+v, want the App as stored", applied.ObjectMeta)
	}

	live := &kappctrlv1alpha1.App{}
	live.Namespace, live.Name = appNS, "web"
	get(t, k, live)
	live.Labels["kapp.k14s.io/app"] = "1700000000"
	live.Annotations["kapp-controller.carvel.dev/extra"] = "x"
	if err := k.Raw.Update(ctx, live); err != nil {
		t.Fatal(err)
	}
	get(t, k, live)

	k.Reset()
	for range 2 {
		got, err := ApplyApp(ctx, k.Client, desiredApp(t, bd), live)
		if err != nil {
			t.Fatal(err)
		}
		if got != live {
			t.Error("an App up to date is not handed back as it is")
		}
	}
	if got := k.Wrote(); len(got) != 0 {
		t.Fatalf("an App up to date was written: %v", got)
	}

	for _, tt := range []struct {
		name   string
		change func(*rukpakv1alpha2.BundleDeployment)
	}{
		{"a new source", func(bd *rukpakv1alpha2.BundleDeployment) { bd.Spec.Source.Image.Ref = "registry.example/web:v2" }},
		{"a new generation", func(bd *rukpakv1alpha2.BundleDeployment) { bd.Generation = 2 }},
		{"a new install namespace", func(bd *rukpakv1alpha2.BundleDeployment) { bd.Spec.InstallNamespace = "other" }},
	} {
		k.Reset()
		if _, err := ApplyApp(ctx, k.Client, desiredApp(t, imageBD("web", tt.change)), live); err != nil {
			t.Fatal(err)
		}
		if got := k.Wrote(); len(got) != 1 {
			t.Errorf("%s: wrote %v, want one apply", tt.name, got)
		}
	}
}

// An App being deleted is applied again, not taken as up to date.
func TestApplyAppDoesNotTakeADeletingAppAsCurrent(t *testing.T) {
	t.Parallel()
	k := fakekube.New(nil)
	desired := desiredApp(t, imageBD("web"))
	live := desired.DeepCopy()
	now := metav1.Now()
	live.DeletionTimestamp = &now
	if up := appUpToDate(desired, live); up {
		t.Fatal("a deleting App is up to date")
	}
	if _, err := ApplyApp(context.Background(), k.Client, desired, live); err != nil {
		t.Fatal(err)
	}
	if got := k.Count("", fakekube.Apply, "App"); got != 1 {
		t.Errorf("%d applies, want 1", got)
	}
}

// DeployedCurrent holds only for the App's current generation.
func TestDeployedCurrent(t *testing.T) {
	t.Parallel()
	app := &kappctrlv1alpha1.App{}
	app.Generation = 2
	app.Status.Conditions = []kappctrlv1alpha1.Condition{{Type: kappctrlv1alpha1.ReconcileSucceeded, Status: "True"}}
	app.Status.ObservedGeneration = 1
	if DeployedCurrent(app) {
		t.Error("generation 1's deploy counts for generation 2")
	}
	app.Status.ObservedGeneration = 2
	if !DeployedCurrent(app) || FailedCurrent(app) {
		t.Error("generation 2 deployed is not DeployedCurrent")
	}
	app.Status.Conditions[0].Type = kappctrlv1alpha1.ReconcileFailed
	if DeployedCurrent(app) || !FailedCurrent(app) {
		t.Error("a failed deploy is not FailedCurrent")
	}
}
