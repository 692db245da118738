package drift

import (
	"context"
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

// readerCache is the informer cache the repair reads Apps from, served by
// a fake cluster's client.
type readerCache struct {
	cache.Cache
	r client.Reader
}

func (c readerCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.r.Get(ctx, key, obj, opts...)
}

// The timer of a run under way moves with each report: a deploy that
// reports its progress every DeployHeartbeat for longer than StepQuiet is
// never asked about, and one that stops is asked about StepQuiet after its
// last report, once. test/reconciler's "runs kapp-controller lost" shows
// the same against a real API server, for a few reports.
func TestStallRepairFollowsReports(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	app := &kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Namespace: "rukpak-system", Name: "bd1", Generation: 1,
		Labels: map[string]string{ownerKindLabel: rukpakv1alpha2.OwnerKind, ownerNameLabel: "bd1"}}}
	k := fakekube.New(nil, app)
	report := func(at time.Time) *kappctrlv1alpha1.App {
		t.Helper()
		got := &kappctrlv1alpha1.App{}
		if err := k.Raw.Get(ctx, client.ObjectKeyFromObject(app), got); err != nil {
			t.Fatal(err)
		}
		got.Status.ObservedGeneration = got.Generation
		got.Status.Conditions = []kappctrlv1alpha1.Condition{{Type: kappctrlv1alpha1.Reconciling, Status: corev1.ConditionTrue}}
		got.Status.Fetch = &kappctrlv1alpha1.AppStatusFetch{StartedAt: metav1.NewTime(t0), UpdatedAt: metav1.NewTime(t0)}
		got.Status.Template = &kappctrlv1alpha1.AppStatusTemplate{UpdatedAt: metav1.NewTime(t0)}
		got.Status.Deploy = &kappctrlv1alpha1.AppStatusDeploy{StartedAt: metav1.NewTime(t0), UpdatedAt: metav1.NewTime(at)}
		if err := k.Raw.Status().Update(ctx, got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	now := t0
	// The API server moves an App's generation with its spec; the fake
	// store does not, so each patch does it here.
	writer := interceptor.NewClient(k.Client.(client.WithWatch), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := c.Patch(ctx, obj, patch, opts...); err != nil {
				return err
			}
			obj.SetGeneration(obj.GetGeneration() + 1)
			return k.Raw.Update(ctx, obj)
		},
	})
	s := NewStallRepair(writer, k.Direct, readerCache{r: k.Client}, nil, time.Minute)
	s.now = func() time.Time { return now }
	s.queue = newAppQueue("stall-test")
	defer s.queue.ShutDown()
	key := client.ObjectKeyFromObject(app)
	asked := func() bool {
		t.Helper()
		if err := s.check(ctx, key); err != nil {
			t.Fatal(err)
		}
		got := &kappctrlv1alpha1.App{}
		if err := k.Raw.Get(ctx, key, got); err != nil {
			t.Fatal(err)
		}
		r, ok := status.RerunOf(got)
		return ok && r.Why == status.RerunStalled
	}

	prev := report(t0)
	s.appChanged(nil, prev)
	last := t0
	for now = t0.Add(status.DeployHeartbeat); now.Sub(t0) < status.StepQuiet+10*time.Second; now = now.Add(status.DeployHeartbeat) {
		cur := report(now)
		s.appChanged(prev, cur)
		prev, last = cur, now
		if asked() {
			t.Fatalf("a deploy reporting every %s was asked about %s after it began", status.DeployHeartbeat, now.Sub(t0))
		}
	}
	now = last.Add(status.StepQuiet - time.Second)
	if asked() {
		t.Fatalf("asked %s after the last report, before StepQuiet", now.Sub(last))
	}
	now = last.Add(status.StepQuiet)
	if !asked() {
		t.Fatalf("not asked %s after the last report", now.Sub(last))
	}
	if n := k.Count(fakekube.ViaClient, fakekube.Patch, "App"); n != 1 {
		t.Errorf("%d writes of the App, want the one request: %v", n, k.Wrote())
	}
}
