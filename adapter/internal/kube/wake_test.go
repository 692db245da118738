package kube

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

// Wake sends what its filter picks, as listed, to the channel, without
// waiting for a reader; it gives up when its context ends.
func TestWake(t *testing.T) {
	failed := func(bd *rukpakv1alpha2.BundleDeployment) {
		meta.SetStatusCondition(&bd.Status.Conditions, metav1.Condition{Type: "Unpacked", Status: metav1.ConditionFalse, Reason: "UnpackFailed"})
	}
	k := fakekube.New(nil, imageBD("a", failed), imageBD("b"), imageBD("c", failed))
	picked := func(bd *rukpakv1alpha2.BundleDeployment) bool { return len(bd.Status.Conditions) > 0 }

	to := make(chan event.GenericEvent)
	if err := Wake(context.Background(), k.Client, &rukpakv1alpha2.BundleDeploymentList{}, picked, to); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 2 {
		select {
		case e := <-to:
			got = append(got, e.Object.GetName())
		case <-time.After(5 * time.Second):
			t.Fatalf("woke %v, want a and c", got)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("woke %v, want a and c", got)
	}
	select {
	case e := <-to:
		t.Errorf("woke %s too", e.Object.GetName())
	case <-time.After(50 * time.Millisecond):
	}

	ctx, cancel := context.WithCancel(context.Background())
	if err := Wake(ctx, k.Client, &rukpakv1alpha2.BundleDeploymentList{}, picked, to); err != nil {
		t.Fatal(err)
	}
	cancel()
	// The sender gave up: nothing (or, raced with the cancel, one send at
	// most) is left to take.
	time.Sleep(50 * time.Millisecond)
	n := 0
	for done := false; !done; {
		select {
		case <-to:
			n++
		case <-time.After(50 * time.Millisecond):
			done = true
		}
	}
	if n > 1 {
		t.Errorf("%d sent after the context ended", n)
	}
}
