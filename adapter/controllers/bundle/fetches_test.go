package bundle

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
)

func fetchBundle(name, uid string) *rukpakv1alpha1.Bundle {
	return &rukpakv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(uid)}}
}

func imageSource(ref string) rukpakv1alpha1.BundleSource {
	return rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeImage, Image: &rukpakv1alpha1.ImageSource{Ref: ref}}
}

// Many Bundles at once run MaxFetches fetches at a time; the others wait
// for a slot and all end.
func TestFetches_Bounded(t *testing.T) {
	t.Parallel()
	var f fetches
	var running, most atomic.Int32
	const n = 50
	release, started := make(chan struct{}), make(chan struct{}, n)
	fn := func(ctx context.Context) (*rukpakv1alpha1.BundleSource, error) {
		started <- struct{}{}
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		select {
		case <-release:
			return &rukpakv1alpha1.BundleSource{}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	jobs := make([]*fetchJob, n)
	for i := range n {
		jobs[i] = f.start(context.Background(), fetchBundle(fmt.Sprintf("b%d", i), fmt.Sprintf("u%d", i)), imageSource("r"), fn)
	}
	for range MaxFetches {
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d fetches started, want %d", running.Load(), MaxFetches)
		}
	}
	// The others wait for a slot: none starts before one is released.
	select {
	case <-started:
		t.Fatalf("a fetch beyond the %d started", MaxFetches)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	for i, j := range jobs {
		if !j.wait(context.Background(), 10*time.Second) || j.err != nil {
			t.Fatalf("fetch %d: ended %t, %v", i, j.wait(context.Background(), 0), j.err)
		}
	}
	if got := most.Load(); got > MaxFetches {
		t.Errorf("%d fetches ran at once, want at most %d", got, MaxFetches)
	}
}

// A Bundle replaced under its name (another UID or source), or gone,
// cancels the fetch of what it was, running or waiting for a slot.
func TestFetches_ReplacedOrGoneIsCancelled(t *testing.T) {
	t.Parallel()
	var f fetches
	block := func(ctx context.Context) (*rukpakv1alpha1.BundleSource, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	// Fill every slot, so that the last one waits.
	var held []*fetchJob
	for i := range MaxFetches {
		held = append(held, f.start(context.Background(), fetchBundle(fmt.Sprintf("held%d", i), "h"), imageSource("r"), block))
	}
	old := f.start(context.Background(), fetchBundle("web", "uid-1"), imageSource("r:v1"), block)
	waiting := f.start(context.Background(), fetchBundle("queued", "uid-q"), imageSource("r"), block)

	newer := f.start(context.Background(), fetchBundle("web", "uid-2"), imageSource("r:v1"), block)
	if newer == old {
		t.Fatal("a Bundle of another UID shares the fetch of the one it replaced")
	}
	if !old.wait(context.Background(), 10*time.Second) || !errors.Is(old.err, context.Canceled) {
		t.Fatalf("the replaced Bundle's fetch: %v, want it cancelled", old.err)
	}
	f.drop("queued")
	if !waiting.wait(context.Background(), 10*time.Second) || !errors.Is(waiting.err, context.Canceled) {
		t.Fatalf("a gone Bundle's fetch waiting for a slot: %v, want it cancelled", waiting.err)
	}
	for i, j := range held {
		f.drop(fmt.Sprintf("held%d", i))
		if !j.wait(context.Background(), 10*time.Second) || !errors.Is(j.err, context.Canceled) {
			t.Fatalf("a gone Bundle's running fetch: %v, want it cancelled", j.err)
		}
	}
	f.drop("web")
	if !newer.wait(context.Background(), 10*time.Second) {
		t.Fatal("the fetch of the Bundle's new source never ran")
	}
}

// What a fetch stored before its Bundle went, or was replaced by another
// UID, is forgotten once the fetch ends, whether the cancel came before
// or after its store; a fetch of the same UID taking its place keeps it.
func TestFetches_WhatAnAbandonedFetchStoredIsForgotten(t *testing.T) {
	t.Parallel()
	forgotten := make(chan types.UID, 8)
	f := fetches{forget: func(uid types.UID) { forgotten <- uid }}
	stored := func(context.Context) (*rukpakv1alpha1.BundleSource, error) {
		return &rukpakv1alpha1.BundleSource{}, nil
	}
	ended := func(j *fetchJob) {
		t.Helper()
		if !j.wait(context.Background(), 10*time.Second) || j.err != nil {
			t.Fatalf("fetch: %v", j.err)
		}
	}
	expect := func(what string, want types.UID) {
		t.Helper()
		select {
		case got := <-forgotten:
			if got != want {
				t.Fatalf("%s: forgot %q, want %q", what, got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: nothing forgotten, want %q", what, want)
		}
	}

	gone := f.start(context.Background(), fetchBundle("gone", "uid-gone"), imageSource("r"), stored)
	ended(gone)
	f.drop("gone")
	expect("a gone Bundle's ended fetch", "uid-gone")

	// Gone while it stores: its end forgets.
	storing, done := make(chan struct{}), make(chan struct{})
	late := f.start(context.Background(), fetchBundle("late", "uid-late"), imageSource("r"), func(context.Context) (*rukpakv1alpha1.BundleSource, error) {
		close(storing)
		<-done
		return &rukpakv1alpha1.BundleSource{}, nil
	})
	<-storing
	f.drop("late")
	close(done)
	ended(late)
	expect("a Bundle gone while its fetch stored", "uid-late")

	old := f.start(context.Background(), fetchBundle("web", "uid-1"), imageSource("r"), stored)
	ended(old)
	f.start(context.Background(), fetchBundle("web", "uid-2"), imageSource("r"), stored)
	expect("a replaced Bundle's ended fetch", "uid-1")

	// The same UID under another source: the new fetch owns the UID's
	// content, and the old one's end forgets nothing.
	running, release := make(chan struct{}), make(chan struct{})
	held := f.start(context.Background(), fetchBundle("pinned", "uid-p"), imageSource("r:v1"), func(context.Context) (*rukpakv1alpha1.BundleSource, error) {
		close(running)
		<-release // ends well even though cancelled: its store came first
		return &rukpakv1alpha1.BundleSource{}, nil
	})
	<-running
	again := f.start(context.Background(), fetchBundle("pinned", "uid-p"), imageSource("r@sha256:aaa"), stored)
	close(release)
	ended(held)
	ended(again)
	f.drop("web")
	expect("the replacing Bundle, gone", "uid-2")
	select {
	case uid := <-forgotten:
		t.Fatalf("forgot %q", uid)
	default:
	}
}
