package bundledeployment

import (
	"context"
	"slices"
	"strings"
	"testing"

	packagingv1alpha1 "carvel.dev/kapp-controller/pkg/apis/packaging/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// catalogBD is a BundleDeployment a catalog Package's template made for
// the PackageInstall pi in ns, of the OLM package pkg.
func catalogBD(name, pkg, ns, pi string) *rukpakv1alpha2.BundleDeployment {
	bd := newBD(name, rukpakv1alpha2.ClassRegistry)
	bd.Labels = map[string]string{catalog.LabelPackage: pkg}
	bd.Annotations = map[string]string{catalog.AnnotationPackagesNS: ns, catalog.AnnotationInstall: pi, catalog.AnnotationChannel: "beta"}
	return bd
}

// globalChannels sees, from a namespace, its own Packages and those of
// the namespace global.
type globalChannels struct{ Channels }

func (globalChannels) Sees(ns string, o client.Object) bool {
	return o.GetNamespace() == ns || o.GetNamespace() == "global"
}

// TestInstallsOfPackage: a catalog Package's change wakes the installs of
// its OLM package whose Packages' namespace sees it (its own; every one
// for a Package of the global packaging namespace), and no other.
func TestInstallsOfPackage(t *testing.T) {
	t.Parallel()
	plain := newBD("plain", rukpakv1alpha2.ClassPlain)
	c := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(
		catalogBD("prom.operators", "prometheus", "operators", "prom"),
		catalogBD("prom.other", "prometheus", "other", "prom"),
		catalogBD("etcd.operators", "etcd", "operators", "etcd"),
		plain,
	).Build()
	r := &BundleDeploymentReconciler{client: c, channels: globalChannels{}}
	pkgIn := func(ns string, labels map[string]string) client.Object {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "beta.prometheus.operators.rukpak-kapp.dev.2.0.0", Labels: labels}}
	}
	pkg := func(labels map[string]string) client.Object { return pkgIn("operators", labels) }
	if got := names(r.installsOfPackage(context.Background(), pkg(map[string]string{catalog.LabelPackage: "prometheus"}))); !slices.Equal(got, []string{"prom.operators"}) {
		t.Errorf("a prometheus Package in operators woke %v, want [prom.operators]", got)
	}
	if got := names(r.installsOfPackage(context.Background(), pkgIn("global", map[string]string{catalog.LabelPackage: "prometheus"}))); !slices.Equal(got, []string{"prom.operators", "prom.other"}) {
		t.Errorf("a prometheus Package in the global packaging namespace woke %v, want [prom.operators prom.other]", got)
	}
	if got := r.installsOfPackage(context.Background(), pkg(nil)); len(got) != 0 {
		t.Errorf("a Package of no catalog woke %v", got)
	}
}

// TestAnnounce: the gauge follows the condition as stored or computed; a
// version becoming available is an Event on the PackageInstall once, when
// the status saying it is written, and again only for another version.
func TestAnnounce(t *testing.T) {
	t.Parallel()
	pi := &packagingv1alpha1.PackageInstall{ObjectMeta: metav1.ObjectMeta{Namespace: "operators", Name: "prom", UID: "uid-prom"}}
	s := testScheme(t)
	if err := packagingv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(pi).Build()
	recorder := events.NewFakeRecorder(10)
	vec := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "test_upgrade_available"}, []string{"bundledeployment", "namespace", "packageinstall", "channel"})
	r := &BundleDeploymentReconciler{direct: c, recorder: recorder, notices: noticeGauge{vec}}
	gauge := func() float64 {
		var m dto.Metric
		if err := vec.WithLabelValues("prom.operators", "operators", "prom", "beta").Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetGauge().GetValue()
	}
	offer := func(status metav1.ConditionStatus, msg string) rukpakv1alpha2.BundleDeploymentStatus {
		return rukpakv1alpha2.BundleDeploymentStatus{Conditions: []metav1.Condition{{Type: rukpakv1alpha2.TypeUpgradeAvailable, Status: status, Reason: "r", Message: msg}}}
	}
	announced := func() []string {
		var out []string
		for {
			select {
			case e := <-recorder.Events:
				out = append(out, e)
			default:
				return out
			}
		}
	}
	bd := catalogBD("prom.operators", "prometheus", "operators", "prom")
	ctx := context.Background()
	// report: the notice stored is read before the write, which stores
	// the new status in the BundleDeployment it was given.
	report := func(st rukpakv1alpha2.BundleDeploymentStatus, wrote bool) {
		was := storedNotice(bd)
		if wrote {
			bd.Status = st
		}
		r.announce(ctx, bd, was, st, wrote)
	}

	report(offer(metav1.ConditionFalse, "1.0.0, the version installed, is the head of channel beta"), true)
	if gauge() != 0 || len(announced()) != 0 {
		t.Fatalf("at the head: gauge %v, events %v", gauge(), announced())
	}
	report(offer(metav1.ConditionTrue, "Channel beta offers 1.0.1"), false)
	if gauge() != 1 || len(announced()) != 0 {
		t.Fatalf("an offer not written: gauge %v, events %v (want 1, none)", gauge(), announced())
	}
	report(offer(metav1.ConditionTrue, "Channel beta offers 1.0.1"), true)
	if got := announced(); len(got) != 1 || !strings.Contains(got[0], "Normal UpgradeAvailable Channel beta offers 1.0.1") {
		t.Fatalf("the offer written: events %v, want one UpgradeAvailable", got)
	}
	report(offer(metav1.ConditionTrue, "Channel beta offers 1.0.1"), true)
	if got := announced(); len(got) != 0 {
		t.Fatalf("the same offer again: events %v, want none", got)
	}
	report(offer(metav1.ConditionTrue, "Channel beta offers 2.0.0"), true)
	if got := announced(); len(got) != 1 || !strings.Contains(got[0], "offers 2.0.0") {
		t.Fatalf("a later version: events %v, want one", got)
	}
	r.notices.Forget("prom.operators", "")
	series := make(chan prometheus.Metric, 10)
	vec.Collect(series)
	if n := len(series); n != 0 {
		t.Errorf("%d series left after the BundleDeployment was forgotten", n)
	}
}
