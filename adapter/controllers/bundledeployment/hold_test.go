package bundledeployment

import (
	"context"
	"strings"
	"testing"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/kube"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/internal/scope"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// channel is a catalog channel as the cache of its Packages shows it.
type channel struct {
	nodes     []catalog.Node
	retracted map[string]string
}

func (c channel) Channel(context.Context, string, string) ([]catalog.Entry, error) {
	var out []catalog.Entry
	for _, n := range c.nodes {
		out = append(out, n.Entry)
	}
	return out, nil
}

func (c channel) Nodes(context.Context, string, string) ([]catalog.Node, error, error) {
	return c.nodes, nil, nil
}

func (c channel) Retracted(_ context.Context, _, _, bundle string) (string, bool, error) {
	rev, ok := c.retracted[bundle]
	return rev, ok, nil
}

func (channel) Sees(string, client.Object) bool { return true }

// viewApp records the view the App mode was asked to install.
type viewApp struct {
	fakeApp
	views *[]*rukpakv1alpha2.BundleDeployment
}

func (v viewApp) Install(ctx context.Context, s *scope.Scope) scope.Outcome {
	*v.views = append(*v.views, s.View)
	return v.fakeApp.Install(ctx, s)
}

func efsEntry(version string) catalog.Entry {
	e := catalog.Entry{Package: "efs", Channel: "stable", Bundle: "efs." + version, Version: version, RefName: "stable.efs.example.com"}
	if version == "2.0.0" {
		e.Replaces = "efs.1.0.0"
	}
	return e
}

// efsBD is a BundleDeployment a catalog Package made for version,
// with extra annotations.
func efsBD(version string, extra map[string]string) *rukpakv1alpha2.BundleDeployment {
	bd := newBD("efs.ops", rukpakv1alpha2.ClassPlain, kube.Finalizer)
	bd.Labels = map[string]string{catalog.LabelPackage: "efs"}
	bd.Annotations = efsEntry(version).Annotations()
	bd.Annotations[catalog.AnnotationPackagesNS] = "ops"
	bd.Annotations[catalog.AnnotationInstall] = "efs"
	for k, v := range extra {
		bd.Annotations[k] = v
	}
	bd.Spec.Source.Image.Ref = "registry.example/efs:" + version
	return bd
}

// deployedApp is the App of efs.ops that deployed version.
func deployedApp(version string) *kappctrlv1alpha1.App {
	app := &kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Namespace: "rukpak-system", Name: "efs.ops", Generation: 1, Annotations: efsEntry(version).Annotations()}}
	app.Status.ObservedGeneration = 1
	app.Status.Conditions = []kappctrlv1alpha1.Condition{{Type: kappctrlv1alpha1.ReconcileSucceeded, Status: "True"}}
	return app
}

// A version held (no approval covers it, or its catalog retracted it) is
// installed neither by a create nor by an update, whatever let the
// BundleDeployment get there: a create installs nothing (no App is made);
// an update keeps the App on the version installed, with the update's
// other fields; Held says why and what to do.
func TestReconcile_HoldsWhatIsNotApproved(t *testing.T) {
	t.Parallel()
	manual := map[string]string{catalog.AnnotationUpgradeApproval: catalog.ApprovalManual}
	ch := channel{nodes: []catalog.Node{{Entry: efsEntry("1.0.0"), Image: "registry.example/efs@sha256:100"}, {Entry: efsEntry("2.0.0"), Image: "registry.example/efs@sha256:200"}},
		retracted: map[string]string{"efs.3.0.0": "registry.example/catalog@sha256:9"}}
	for _, tt := range []struct {
		name string
		bd   *rukpakv1alpha2.BundleDeployment
		app  *kappctrlv1alpha1.App
		// image is the one the App is asked to install ("": no App write).
		image, reason, words string
	}{
		{name: "created at a version not approved: nothing installed", bd: efsBD("2.0.0", manual),
			reason: rukpakv1alpha2.ReasonAwaitingApproval, words: "install of efs held: 2.0.0 waits for approval (upgradeApproval: Manual), and nothing is installed until it is approved"},
		{name: "created at the version approved", bd: efsBD("2.0.0", map[string]string{catalog.AnnotationUpgradeApproval: catalog.ApprovalManual, catalog.AnnotationApprovedVersion: "2.0.0"}),
			image: "registry.example/efs:2.0.0"},
		{name: "updated to a version not approved: the version installed stays, with the update's fields", bd: efsBD("2.0.0", manual), app: deployedApp("1.0.0"),
			image: "registry.example/efs@sha256:100", reason: rukpakv1alpha2.ReasonAwaitingApproval},
		{name: "a version the catalog retracted, created", bd: efsBD("3.0.0", nil),
			reason: rukpakv1alpha2.ReasonRetracted, words: "version 3.0.0 of efs was retracted from channel stable"},
		{name: "no move: the version installed", bd: efsBD("1.0.0", manual), app: deployedApp("1.0.0"), image: "registry.example/efs:1.0.0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			log := &calls{}
			var views []*rukpakv1alpha2.BundleDeployment
			objs := []client.Object{tt.bd}
			if tt.app != nil {
				objs = append(objs, tt.app)
			}
			f := setup(t, fakeApp{calls: log}, fakeServe{calls: log, leaveGone: true}, objs, interceptor.Funcs{})
			f.r.app = viewApp{fakeApp: fakeApp{calls: log}, views: &views}
			f.r.channels = ch
			if _, err := reconcileBD(t, f, tt.bd.Name); err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.image == "" && len(views) != 0:
				t.Fatalf("the App was written with %s: a held create installs nothing", views[0].Spec.Source.Image.Ref)
			case tt.image != "" && (len(views) != 1 || views[0].Spec.Source.Image.Ref != tt.image):
				t.Fatalf("views %d, want one installing %s", len(views), tt.image)
			}
			if tt.reason != "" && tt.image != "" && views[0].Annotations[catalog.AnnotationHeld] != "efs.1.0.0" {
				t.Errorf("the held App's annotations %v lack %s", views[0].Annotations, catalog.AnnotationHeld)
			}
			if tt.reason == "" || tt.image != "" {
				// A held update says Held once its App deployed the
				// version installed (status.TestCompute_Hold).
				return
			}
			h := apimeta.FindStatusCondition(get(t, f.c, tt.bd.Name).Status.Conditions, rukpakv1alpha2.TypeHeld)
			if h == nil || h.Reason != tt.reason || h.ObservedGeneration != tt.bd.Generation || !strings.Contains(h.Message, tt.words) {
				t.Errorf("Held %+v, want %s with %q", h, tt.reason, tt.words)
			}
		})
	}
}
