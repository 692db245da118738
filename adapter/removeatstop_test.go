package adapter

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
)

// runUntilStopped is a manager that runs until its context ends and
// says whether the directory was still there when it stopped.
type runUntilStopped struct {
	ctrl.Manager
	dir        string
	keptWhile  bool
	keptAtStop bool
}

func (m *runUntilStopped) Start(ctx context.Context) error {
	_, err := os.Stat(m.dir)
	m.keptWhile = err == nil
	<-ctx.Done()
	_, err = os.Stat(m.dir)
	m.keptAtStop = err == nil
	return nil
}

func TestRemovingAtStop(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "content")
	if err := os.MkdirAll(filepath.Join(dir, "kept"), 0o700); err != nil {
		t.Fatal(err)
	}
	inner := &runUntilStopped{dir: dir}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (removingAtStop{Manager: inner, dirs: []string{dir}}).Start(ctx); err != nil {
		t.Fatal(err)
	}
	if !inner.keptWhile || !inner.keptAtStop {
		t.Errorf("the directory went before the manager had stopped (there while it ran: %t; as it stopped: %t)", inner.keptWhile, inner.keptAtStop)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the directory is still there after the manager stopped: %v", err)
	}
}
