package bundle

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
)

// MaxFetches bounds the fetches that run at once, whatever the number of
// Bundles: each holds its content in memory (up to the fetch's size cap)
// until it has stored it, and Bundles are users' input. The others wait
// for a slot, in the order they started.
const MaxFetches = 4

// fetches are the unpacks under way, one per Bundle. A fetch runs in a
// goroutine of its own so that a slow registry holds no worker; it stores
// the content and writes nothing to the API server: when it ends it wakes
// its Bundle, and the reconcile that takes its result writes the status,
// as every status of a Bundle is written.
// A fetch whose Bundle went, or was replaced (another UID or source under
// the name), is cancelled.
type fetches struct {
	mu   sync.Mutex
	jobs map[string]*fetchJob
	// slots holds one token per running fetch (MaxFetches at most).
	slots chan struct{}
	// requeue queues the named Bundle again, giving up when ctx ends; nil:
	// nothing is woken (the tests reconcile by hand).
	requeue func(ctx context.Context, name string)
	// forget drops the content stored for a Bundle's UID: what a fetch
	// stored for a Bundle that went, or was replaced, before anyone took
	// its result. nil: nothing is forgotten.
	forget func(types.UID)
}

// fetchJob is one fetch of one Bundle's source.
type fetchJob struct {
	uid     types.UID
	src     rukpakv1alpha1.BundleSource
	started time.Time
	cancel  context.CancelFunc
	done    chan struct{}
	// Set before done is closed.
	resolved *rukpakv1alpha1.BundleSource
	err      error
	// settled says the fetch ended (set with fetches.mu held).
	settled bool
}

// fetchFunc fetches and stores a Bundle's content, and says what it
// resolved the source to.
type fetchFunc func(ctx context.Context) (*rukpakv1alpha1.BundleSource, error)

// under is the fetch of b's src under way (or ended, its result not
// taken yet); nil: none.
func (f *fetches) under(b *rukpakv1alpha1.Bundle, src rukpakv1alpha1.BundleSource) *fetchJob {
	f.mu.Lock()
	defer f.mu.Unlock()
	if j, ok := f.jobs[b.Name]; ok && j.uid == b.UID && equality.Semantic.DeepEqual(j.src, src) {
		return j
	}
	return nil
}

// start returns the fetch of b's src under way, or starts one with fn.
// ctx is the controller's (controller-runtime ends it when the
// manager stops, not when one reconcile returns); the fetch's own time is
// bounded by store.FetchTimeout.
func (f *fetches) start(ctx context.Context, b *rukpakv1alpha1.Bundle, src rukpakv1alpha1.BundleSource, fn fetchFunc) *fetchJob {
	f.mu.Lock()
	defer f.mu.Unlock()
	if j, ok := f.jobs[b.Name]; ok && j.uid == b.UID && equality.Semantic.DeepEqual(j.src, src) {
		return j
	}
	if old, ok := f.jobs[b.Name]; ok {
		f.abandon(old, b.UID)
	}
	fetchCtx, cancel := context.WithCancel(ctx)
	j := &fetchJob{uid: b.UID, src: src, started: time.Now(), cancel: cancel, done: make(chan struct{})}
	if f.jobs == nil {
		f.jobs = map[string]*fetchJob{}
	}
	if f.slots == nil {
		f.slots = make(chan struct{}, MaxFetches)
	}
	f.jobs[b.Name] = j
	name, slots := b.Name, f.slots
	go func() {
		defer cancel()
		select {
		case slots <- struct{}{}:
			j.resolved, j.err = fn(fetchCtx)
			<-slots
		case <-fetchCtx.Done():
			j.err = fmt.Errorf("fetch cancelled before it started: %w", context.Cause(fetchCtx))
		}
		f.settle(name, j)
		close(j.done)
		if f.requeue != nil && ctx.Err() == nil {
			f.requeue(ctx, name)
		}
	}()
	return j
}

// wait waits for j until it ends or until it has run for d, whichever is
// first, and says whether it ended.
func (j *fetchJob) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(max(time.Until(j.started.Add(d)), 0))
	defer t.Stop()
	select {
	case <-j.done:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	// A fetch that ended as the wait did is taken now, not at its requeue.
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// finish forgets j, whose result the caller takes: the next unpack of the
// Bundle fetches again.
func (f *fetches) finish(name string, j *fetchJob) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.jobs[name] == j {
		delete(f.jobs, name)
	}
}

// drop forgets the fetch of a Bundle that is gone, cancelling it if it
// still runs (or waits for a slot); its result is not read, and what it
// stored is forgotten.
func (f *fetches) drop(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if j, ok := f.jobs[name]; ok {
		f.abandon(j, "")
	}
	delete(f.jobs, name)
}

// A fetch stores its content before it ends, so its Bundle can go, or be
// replaced, after the store and before anyone took the result: that
// content is forgotten, by abandon when the fetch had ended, else by
// settle when it ends. Both run with f.mu held, so exactly one of them
// sees the other's side. Content of the UID a fetch of the same UID took
// over is kept.

// abandon cancels j, whose Bundle went (by "") or was replaced by a
// Bundle of UID by.
func (f *fetches) abandon(j *fetchJob, by types.UID) {
	j.cancel()
	if j.settled && j.err == nil && j.uid != by && f.forget != nil {
		f.forget(j.uid)
	}
}

// settle marks j ended; if its Bundle was abandoned meanwhile, what it
// stored is forgotten.
func (f *fetches) settle(name string, j *fetchJob) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j.settled = true
	cur := f.jobs[name]
	if cur == j || j.err != nil || f.forget == nil || (cur != nil && cur.uid == j.uid) {
		return
	}
	f.forget(j.uid)
}
