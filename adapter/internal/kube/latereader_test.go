package kube

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/test/fakekube"
)

// TestLateReader: reads fail, naming the API, until a reader is set; then
// they go through it.
func TestLateReader(t *testing.T) {
	l := NewLateReader("kapp-controller's packaging API")
	err := l.List(context.Background(), &corev1.ConfigMapList{})
	if !errors.Is(err, ErrNotServed) || !strings.Contains(err.Error(), "kapp-controller's packaging API") {
		t.Fatalf("before Set: %v", err)
	}
	if err := l.Get(context.Background(), client.ObjectKey{Name: "x"}, &corev1.ConfigMap{}); !errors.Is(err, ErrNotServed) {
		t.Fatalf("Get before Set: %v", err)
	}
	k := fakekube.New(nil, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x"}})
	l.Set(k.Direct)
	list := &corev1.ConfigMapList{}
	if err := l.List(context.Background(), list); err != nil || len(list.Items) != 1 {
		t.Fatalf("after Set: %v, %d items", err, len(list.Items))
	}
	if err := l.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "x"}, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("Get after Set: %v", err)
	}
}
