package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// result is one system's numbers.
type result struct {
	System              string
	N                   int
	Installed           []time.Duration // per object, from its create to first seen installed
	Total               time.Duration   // first create to last installed
	InstallCPU, IdleCPU map[string]float64
	PeakRSS             map[string]float64
	InstallAPI, IdleAPI map[string]apiCount
	Idle                time.Duration
	Change              time.Duration
	// Single is the time to Installed of each of a few more objects,
	// created one at a time at rest: what a user feels on one apply.
	Single  []time.Duration
	Missing int // objects not installed within the bound
	// Background is the CPU seconds the systems installed earlier used
	// during this one's install: they share the machine.
	Background float64
	// ControlPlaneCPU is what etcd and kube-apiserver used meanwhile.
	ControlPlaneCPU float64
	// Controller is kapp-controller's requests per second during the
	// install (the floor's own for the floor); empty for rukpak.
	Controller rate
	// Drift is the repairs timed after the idle window; nil where the
	// system repairs only at its sync period (the floor).
	Drift *driftResult
	// Setup is what the run measured with.
	Setup benchSetup
	// Stored is what the install added to the cluster's store.
	Stored stored
}

type bench struct {
	c        client.WithWatch
	audit    string
	refs     []string
	single   []string
	v2       string
	idle     time.Duration
	installT time.Duration
	// controlPlane are etcd and kube-apiserver, shared by every system.
	controlPlane procSet
	// repairs is how many drifted objects each system repairs.
	repairs int
	setup   benchSetup
}

// running is a system whose objects are installed and whose processes
// run until the benchmark ends.
type running struct {
	s     system
	res   *result
	procs procSet
}

// install starts s and creates its N objects, timing each to done, while
// the systems in earlier keep running.
func (b *bench) install(ctx context.Context, s system, earlier []*running) (*running, error) {
	res := &result{System: s.Name(), N: len(b.refs), Idle: b.idle, Setup: b.setup}
	procs, err := s.Start(ctx)
	if err != nil {
		return nil, err
	}
	w := newDoneWatcher(s.Done)
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go w.follow(watchCtx, b.c, s.List, client.MatchingLabels{systemLabel: s.Name()})

	cpu0, err := procs.cpu()
	if err != nil {
		return nil, err
	}
	bg0, err := cpuOf(earlier)
	if err != nil {
		return nil, err
	}
	cp0, err := b.controlPlane.cpu()
	if err != nil {
		return nil, err
	}
	stored0, err := storedNow(ctx, b.c)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	for i, ref := range b.refs {
		obj, err := s.Object(i, ref)
		if err != nil {
			return nil, err
		}
		w.created(obj.GetName())
		if err := b.c.Create(ctx, obj); err != nil {
			return nil, fmt.Errorf("create %s: %w", obj.GetName(), err)
		}
	}
	res.Installed, res.Missing = w.wait(ctx, len(b.refs), b.installT)
	t1 := time.Now()
	res.Total = w.last().Sub(t0)
	cpu1, err := procs.cpu()
	if err != nil {
		return nil, err
	}
	res.InstallCPU = sub(cpu1, cpu0)
	bg1, err := cpuOf(earlier)
	if err != nil {
		return nil, err
	}
	res.Background = bg1 - bg0
	cp1, err := b.controlPlane.cpu()
	if err != nil {
		return nil, err
	}
	res.ControlPlaneCPU = total(sub(cp1, cp0))
	if res.InstallAPI, err = countRequests(b.audit, t0, t1); err != nil {
		return nil, err
	}
	if kc := controllerClient(s.Name()); kc != "" {
		res.Controller = res.InstallAPI[kc].rate(t0, t1)
		fmt.Fprintf(os.Stderr, "%s requests during install: %s\n", kc, largestFirst(res.InstallAPI[kc].Verbs))
	}
	stored1, err := storedNow(ctx, b.c)
	if err != nil {
		return nil, err
	}
	res.Stored = stored1.minus(stored0)
	fmt.Fprintf(os.Stderr, "stored per object: %s\n", res.Stored.perObject(res.N))
	if slices.Contains(systemClients[s.Name()], "adapter") {
		fmt.Fprintf(os.Stderr, "adapter writes during install: %s\n", res.InstallAPI["adapter"].byKind())
	}
	return &running{s: s, res: res, procs: procs}, nil
}

// cpuOf is the CPU seconds used so far by the processes of runs.
func cpuOf(runs []*running) (float64, error) {
	sum := 0.0
	for _, r := range runs {
		m, err := r.procs.cpu()
		if err != nil {
			return 0, err
		}
		sum += total(m)
	}
	return sum, nil
}

// idleAll measures one idle window shared by every installed system: each
// system's processes and API clients are told apart, so the windows need
// not follow one another.
func (b *bench) idleAll(ctx context.Context, runs []*running) error {
	before := make([]map[string]float64, len(runs))
	for i, r := range runs {
		var err error
		if before[i], err = r.procs.cpu(); err != nil {
			return err
		}
	}
	t0 := time.Now()
	select {
	case <-time.After(b.idle):
	case <-ctx.Done():
		return ctx.Err()
	}
	t1 := time.Now()
	counts, err := countRequests(b.audit, t0, t1)
	if err != nil {
		return err
	}
	for i, r := range runs {
		after, err := r.procs.cpu()
		if err != nil {
			return err
		}
		r.res.IdleCPU = sub(after, before[i])
		r.res.IdleAPI = counts
	}
	return nil
}

// rest measures one idle window shared by runs, then times one change in
// each and reads its peak RSS.
func (b *bench) rest(ctx context.Context, runs []*running) error {
	fmt.Fprintf(os.Stderr, "%s: idle for %s\n", time.Now().Format(time.TimeOnly), b.idle)
	if err := b.idleAll(ctx, runs); err != nil {
		return err
	}
	// The window is shared, so its counts are the same in each run. The
	// trace explains the numbers; a failure to read it back must not cost
	// a long run its results.
	if len(runs) > 0 {
		if err := b.traceIdleWrites(ctx, os.Stderr, runs[0].res.IdleAPI); err != nil {
			fmt.Fprintln(os.Stderr, "trace of the writes at rest:", err)
		}
	}
	for _, r := range runs {
		if err := b.finish(ctx, r); err != nil {
			return fmt.Errorf("%s: %w", r.s.Name(), err)
		}
		fmt.Fprintln(os.Stderr, r.res.summaryLine())
	}
	return nil
}

// finish times one change and the drift repairs, and reads the peak RSS
// of the run.
func (b *bench) finish(ctx context.Context, r *running) error {
	var err error
	if r.res.Change, err = b.change(ctx, r.s); err != nil {
		return err
	}
	if r.res.Single, err = b.singles(ctx, r.s); err != nil {
		return err
	}
	if repairs(r.s) && b.repairs > 0 {
		if r.res.Drift, err = b.drift(ctx, r.s); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, r.res.driftLine())
	}
	r.res.PeakRSS, err = r.procs.rss()
	return err
}

// change points the first object at bundle 0's version 2 and times until
// its new ConfigMap key is in the cluster, seen through a watch.
func (b *bench) change(ctx context.Context, s system) (time.Duration, error) {
	first, err := s.Object(0, b.refs[0])
	if err != nil {
		return 0, err
	}
	if err := b.c.Get(ctx, client.ObjectKeyFromObject(first), first); err != nil {
		return 0, err
	}
	before := first.DeepCopyObject().(client.Object)
	s.Change(first, b.v2)
	changed := func(obj client.Object) bool { return obj.(*corev1.ConfigMap).Data["changed"] == "yes" }
	w := newDoneWatcher(changed)
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go w.follow(watchCtx, b.c, func() client.ObjectList { return &corev1.ConfigMapList{} },
		client.InNamespace(namespaceOf(s)), client.MatchingFields{"metadata.name": changedConfigMap})
	// A watch set up after the change still sees it: it starts with the
	// objects as they are.
	w.created(changedConfigMap)
	if err := b.c.Patch(ctx, first, client.MergeFrom(before)); err != nil {
		return 0, fmt.Errorf("change %s: %w", first.GetName(), err)
	}
	took, missing := w.wait(ctx, 1, b.installT)
	if missing > 0 {
		return 0, fmt.Errorf("%s: the changed bundle was not installed within %s", s.Name(), b.installT)
	}
	return took[0], nil
}

// changedConfigMap is the object of bundle 0 that version 2 adds a key to.
const changedConfigMap = "bench-0000"

// cleanup deletes what the system created and waits until it is gone:
// deletion is part of what each system must do right.
func (b *bench) cleanup(ctx context.Context, s system) error {
	sel := client.MatchingLabels{systemLabel: s.Name()}
	list := s.List()
	if err := b.c.List(ctx, list, sel); err != nil {
		return err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	for _, it := range items {
		if err := b.c.Delete(ctx, it.(client.Object)); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	deadline := time.Now().Add(b.installT)
	for time.Now().Before(deadline) {
		// One item is enough to know that some are left.
		list := s.List()
		if err := b.c.List(ctx, list, sel, client.Limit(1)); err != nil {
			return err
		}
		if meta.LenList(list) == 0 {
			return nil
		}
		time.Sleep(time.Second)
	}
	return fmt.Errorf("%s: objects still present %s after deleting them", s.Name(), b.installT)
}

// doneWatcher records when each object is first seen done.
type doneWatcher struct {
	done      func(client.Object) bool
	mu        sync.Mutex
	createdAt map[string]time.Time
	doneAt    map[string]time.Time
}

func newDoneWatcher(done func(client.Object) bool) *doneWatcher {
	return &doneWatcher{done: done, createdAt: map[string]time.Time{}, doneAt: map[string]time.Time{}}
}

func (w *doneWatcher) created(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.createdAt[name] = time.Now()
}

// follow watches (and re-watches when the server ends the watch) until ctx ends.
func (w *doneWatcher) follow(ctx context.Context, c client.WithWatch, list func() client.ObjectList, opts ...client.ListOption) {
	for ctx.Err() == nil {
		started := time.Now()
		wi, err := c.Watch(ctx, list(), opts...)
		if err != nil {
			time.Sleep(time.Second)
			continue
		}
		for ev := range wi.ResultChan() {
			obj, ok := ev.Object.(client.Object)
			if !ok || ev.Type == watch.Deleted || !w.done(obj) {
				continue
			}
			w.mu.Lock()
			if _, seen := w.doneAt[obj.GetName()]; !seen {
				w.doneAt[obj.GetName()] = time.Now()
			}
			w.mu.Unlock()
		}
		wi.Stop()
		// A watch the server ends at once is not retried in a tight loop.
		if time.Since(started) < time.Second {
			time.Sleep(time.Second)
		}
	}
}

func (w *doneWatcher) wait(ctx context.Context, n int, bound time.Duration) ([]time.Duration, int) {
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		w.mu.Lock()
		got := len(w.doneAt)
		w.mu.Unlock()
		if got >= n {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []time.Duration
	for name, at := range w.doneAt {
		out = append(out, at.Sub(w.createdAt[name]))
	}
	slices.Sort(out)
	return out, n - len(out)
}

// waitFor waits until name is done and returns how long it took from its
// create; true when it was not done within bound.
func (w *doneWatcher) waitFor(ctx context.Context, name string, bound time.Duration) (time.Duration, bool) {
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		w.mu.Lock()
		at, done := w.doneAt[name]
		created := w.createdAt[name]
		w.mu.Unlock()
		if done {
			return at.Sub(created), false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return 0, true
}

func (w *doneWatcher) last() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	for _, at := range w.doneAt {
		if at.After(last) {
			last = at
		}
	}
	return last
}

// singleApplies is how many objects are created one at a time at rest.
const singleApplies = 3

// singles creates one more object at a time for each of b.single (bundles
// N, N+1, ...), each once the one before is done, and times each from its
// create to done, seen through a watch.
func (b *bench) singles(ctx context.Context, s system) ([]time.Duration, error) {
	var out []time.Duration
	for k, ref := range b.single {
		obj, err := s.Object(len(b.refs)+k, ref)
		if err != nil {
			return nil, err
		}
		w := newDoneWatcher(s.Done)
		watchCtx, stopWatch := context.WithCancel(ctx)
		go w.follow(watchCtx, b.c, s.List, client.MatchingLabels{systemLabel: s.Name()})
		offset, err := auditSize(b.audit)
		if err != nil {
			stopWatch()
			return nil, err
		}
		w.created(obj.GetName())
		createdAt := time.Now()
		if err := b.c.Create(ctx, obj); err != nil {
			stopWatch()
			return nil, fmt.Errorf("create %s: %w", obj.GetName(), err)
		}
		// The watch also reports the N objects already done; wait for
		// this one.
		took, missing := w.waitFor(ctx, obj.GetName(), b.installT)
		stopWatch()
		if missing {
			return nil, fmt.Errorf("%s was not installed within %s", obj.GetName(), b.installT)
		}
		out = append(out, took)
		if b.setup.timeline {
			if err := printTimeline(os.Stderr, b.audit, offset, obj.GetName(), createdAt, took); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
