package drift

import (
	"context"
	"fmt"
	"sync"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// StallRepair has kapp-controller run again an App whose run it lost (see
// stall.go), with the kick drift repair uses. It keeps one timer per App
// whose run is under way, set to when the run is to be asked about, moved by
// each change of the App's status; nothing is polled. Requests for one App
// back off as drift repair's do, so a kapp-controller that keeps losing runs
// is asked at most about seven times in five minutes per App.
type StallRepair struct {
	client   client.Client
	api      client.Reader
	cache    cache.Cache
	recorder events.EventRecorder
	// templateTimeout is the adapter's --template-timeout.
	templateTimeout time.Duration
	now             func() time.Time

	queue workqueue.TypedRateLimitingInterface[client.ObjectKey]
	mu    sync.Mutex
	apps  map[client.ObjectKey]*stallState
	// awaiting are the Apps whose template-step probe waits to be found
	// held: any App's event may make kapp-controller idle.
	awaiting map[client.ObjectKey]bool
}

// stallState is what StallRepair knows of one App.
type stallState struct {
	// quiet is when the App's status was last seen to change.
	quiet time.Time
	fight fight
	// probe is the last request made during a silent step, until the App's
	// status next changes.
	probe *probe
	// slow is the spec whose silent step a probe found under way: its
	// silent steps are not probed again.
	slow uint64
}

// NewStallRepair makes a StallRepair. templateTimeout is the adapter's
// template deadline (status.Facts.TemplateTimeout), which its template-step
// probe must come before.
func NewStallRepair(c client.Client, api client.Reader, ca cache.Cache, recorder events.EventRecorder, templateTimeout time.Duration) *StallRepair {
	return &StallRepair{client: c, api: api, cache: ca, recorder: recorder, templateTimeout: templateTimeout, now: time.Now,
		apps: map[client.ObjectKey]*stallState{}, awaiting: map[client.ObjectKey]bool{}}
}

// NeedLeaderElection: requests are writes, the leader's alone.
func (s *StallRepair) NeedLeaderElection() bool { return true }

// Start follows the Apps until ctx ends.
func (s *StallRepair) Start(ctx context.Context) error {
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithName("stall"))
	s.queue = newAppQueue("stall")
	defer s.queue.ShutDown()
	return followApps(ctx, s.cache, s.queue, "lost runs", toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.appChanged(nil, obj) },
		UpdateFunc: func(old, obj any) { s.appChanged(old, obj) },
		DeleteFunc: func(obj any) { s.appGone(obj) },
	}, "ask kapp-controller to run an App again", s.check)
}

// appChanged restarts an App's quiet time when its status changed, and
// sets its timer.
func (s *StallRepair) appChanged(oldObj, obj any) {
	app, ok := obj.(*kappctrlv1alpha1.App)
	if !ok || app.Labels[ownerKindLabel] != rukpakv1alpha2.OwnerKind {
		return
	}
	old, _ := oldObj.(*kappctrlv1alpha1.App)
	key := client.ObjectKeyFromObject(app)
	now := s.now()
	s.mu.Lock()
	st, known := s.apps[key]
	if !known {
		// First seen (the adapter started): as if it had just changed.
		st = &stallState{quiet: now}
		s.apps[key] = st
	}
	if old != nil && !apiequality.Semantic.DeepEqual(old.Status, app.Status) {
		st.quiet = now
		if st.probe != nil {
			if st.probe.alive(app) {
				st.slow = st.probe.spec
			}
			st.probe = nil
			delete(s.awaiting, key)
		}
	}
	at, _ := stallCheck(app, st.quiet, s.templateTimeout)
	var recheck []client.ObjectKey
	for k := range s.awaiting {
		if st := s.apps[k]; st != nil && st.probe != nil && !now.Before(st.probe.heldAt.Add(-idleFor)) {
			recheck = append(recheck, k)
		}
	}
	s.mu.Unlock()
	if !at.IsZero() {
		s.queue.AddAfter(key, at.Sub(now))
	}
	for _, k := range recheck {
		s.queue.Add(k)
	}
}

func (s *StallRepair) appGone(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if app, ok := obj.(*kappctrlv1alpha1.App); ok {
		s.mu.Lock()
		delete(s.apps, client.ObjectKeyFromObject(app))
		delete(s.awaiting, client.ObjectKeyFromObject(app))
		s.mu.Unlock()
	}
}

// check asks for a new run of key's App if its run is due to be asked
// about, and sets the timer again otherwise.
func (s *StallRepair) check(ctx context.Context, key client.ObjectKey) error {
	app := &kappctrlv1alpha1.App{}
	if err := s.cache.Get(ctx, key, app); err != nil {
		return client.IgnoreNotFound(err)
	}
	now := s.now()
	s.mu.Lock()
	st, ok := s.apps[key]
	if !ok {
		s.mu.Unlock()
		return nil
	}
	if p := st.probe; p != nil && !p.heldAt.IsZero() {
		s.mu.Unlock()
		return s.checkHeld(ctx, key, app, p)
	}
	at, silent := stallCheck(app, st.quiet, s.templateTimeout)
	quietFor := now.Sub(st.quiet)
	switch {
	case at.IsZero() || (silent && st.slow == specHash(app)):
		s.mu.Unlock()
		return nil
	case now.Before(at):
		s.mu.Unlock()
		s.queue.AddAfter(key, at.Sub(now))
		return nil
	}
	if wait := st.fight.wait(now); wait > 0 {
		s.mu.Unlock()
		s.queue.AddAfter(key, wait)
		return nil
	}
	s.mu.Unlock()
	// The cache may lag: only an App the API server still shows so is asked
	// about. The kick carries this read's resourceVersion, so a status
	// kapp-controller writes meanwhile makes it a conflict, not a request.
	fresh := &kappctrlv1alpha1.App{}
	if err := s.api.Get(ctx, key, fresh); err != nil {
		return client.IgnoreNotFound(err)
	}
	if fresh.ResourceVersion != app.ResourceVersion {
		// Its event is on the way and sets the timer again.
		return nil
	}
	step := status.RunStep(fresh)
	gen, spec := fresh.Generation, specHash(fresh)
	if err := kick(ctx, s.client, fresh, status.RerunStalled); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	s.mu.Lock()
	st.fight.kicked(now)
	if silent {
		st.probe = &probe{generation: gen, spec: spec}
		if step == status.StepTemplate && s.templateTimeout > 0 {
			st.probe.heldAt = now.Add(status.HeldAfter(s.templateTimeout))
			s.awaiting[key] = true
			s.queue.AddAfter(key, max(status.HeldAfter(s.templateTimeout)-idleFor, 0))
		}
	}
	s.mu.Unlock()
	reruns.Inc()
	what := stallNote(step, quietFor.Round(time.Second))
	log.FromContext(ctx).Info("kapp-controller's run of the App made no progress; kapp-controller is asked to run it again", "app", key.String(), "why", what)
	s.record(ctx, fresh, what)
	return nil
}

// checkHeld records that a template step's probe of key's App was left
// waiting by an otherwise idle kapp-controller, once it was (probe.heldCheck).
func (s *StallRepair) checkHeld(ctx context.Context, key client.ObjectKey, app *kappctrlv1alpha1.App, p *probe) error {
	r, pending := status.PendingRerun(app)
	if !pending || r.Generation != p.generation {
		// Picked up, or answered by the old run: the App's status event
		// settles the probe.
		return nil
	}
	busy, err := s.othersBusy(ctx, key)
	if err != nil {
		return err
	}
	now := s.now()
	s.mu.Lock()
	held, idleSince, again := p.heldCheck(now, busy)
	p.idleSince = idleSince
	if held {
		p.heldAt = time.Time{}
		delete(s.awaiting, key)
	}
	s.mu.Unlock()
	if !again.IsZero() {
		s.queue.AddAfter(key, again.Sub(now))
	}
	if !held {
		return nil
	}
	if err := markHeld(ctx, s.client, app, r); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		s.mu.Lock()
		if st := s.apps[key]; st != nil && st.probe == p {
			// Looked at again: at the App's event (a conflict), or with backoff.
			p.heldAt, s.awaiting[key] = now, true
		}
		s.mu.Unlock()
		if apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	log.FromContext(ctx).Info("kapp-controller, with no other App to run, left the run asked for during the template step waiting: the step still runs", "app", key.String())
	return nil
}

// othersBusy says whether kapp-controller has an App other than key's to
// run, as far as the adapter's cache shows its namespaces: one it has yet
// to pick up, one whose run is under way, or one being deleted.
func (s *StallRepair) othersBusy(ctx context.Context, key client.ObjectKey) (bool, error) {
	list := &kappctrlv1alpha1.AppList{}
	if err := s.cache.List(ctx, list); err != nil {
		return false, fmt.Errorf("list Apps: %w", err)
	}
	for i := range list.Items {
		app := &list.Items[i]
		if client.ObjectKeyFromObject(app) == key {
			continue
		}
		if !app.DeletionTimestamp.IsZero() {
			return true, nil
		}
		if app.Spec.Paused || app.Spec.Canceled {
			continue
		}
		if app.Status.ObservedGeneration != app.Generation || status.RunStep(app) != status.StepNone {
			return true, nil
		}
	}
	return false, nil
}

// stallNote says what was seen and what the request does.
func stallNote(step status.Step, quiet time.Duration) string {
	switch step {
	case status.StepDeploy:
		return fmt.Sprintf("kapp-controller reported the App's deploy under way but wrote nothing for %s (it writes every %s while kapp runs): "+
			"it lost the run (it restarted, or could not write the App's status); it is asked to run the App again", quiet, status.DeployHeartbeat)
	case status.StepTemplate:
		return fmt.Sprintf("kapp-controller reported the App's fetch done %s ago and nothing of its template step since; it is asked to run the App again: "+
			"a run it lost starts over at once, a template step still running finishes first", quiet)
	default:
		return fmt.Sprintf("kapp-controller reported the App's run begun %s ago and nothing of its fetch since; it is asked to run the App again: "+
			"a run it lost starts over at once, a fetch still running finishes first", quiet)
	}
}

// record tells the BundleDeployment's user that a run was asked for.
func (s *StallRepair) record(ctx context.Context, app *kappctrlv1alpha1.App, note string) {
	bd := &rukpakv1alpha2.BundleDeployment{}
	if s.recorder == nil || s.cache.Get(ctx, client.ObjectKey{Name: app.Labels[ownerNameLabel]}, bd) != nil {
		return
	}
	s.recorder.Eventf(bd, nil, corev1.EventTypeNormal, "AppRunStalled", "Rerun", "%s", note)
}
