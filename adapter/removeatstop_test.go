package adapter

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestRemoveAtStop(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "content")
	if err := os.MkdirAll(filepath.Join(dir, "kept"), 0o700); err != nil {
		t.Fatal(err)
	}
	r := removeAtStop(dir)
	if r.NeedLeaderElection() {
		t.Error("a replica that is not the leader made the directory too and must remove it")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Start(ctx) }()
	select {
	case err := <-done:
		t.Fatalf("returned before the manager stopped: %v", err)
	default:
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("removed while the manager runs: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the directory is still there after the manager stopped: %v", err)
	}
}
