package adapter

import (
	"sync"
	"time"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// progressDelay is how long a new spec may be in progress before the
// BundleDeployment says so. Most installs finish sooner and go straight from
// no status to their outcome in one write; a slow or stuck one still shows
// that it was picked up within seconds. Failures are never delayed.
const progressDelay = 5 * time.Second

// progressHold tracks, per BundleDeployment generation, since when it has
// been in progress without a status write.
type progressHold struct {
	mu    sync.Mutex
	since map[string]generationSince
}

type generationSince struct {
	generation int64
	at         time.Time
}

// hold decides whether the in-progress result res for bd should wait. It
// returns true and when to look again, or false when res is to be written.
func (p *progressHold) hold(bd *rukpakv1alpha2.BundleDeployment, res status.Result, now time.Time) (bool, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !status.InProgress(res) {
		delete(p.since, bd.Name)
		return false, 0
	}
	if status.ShowsProgress(bd.Status.Conditions, bd.Generation) {
		// Already said; the next write is the outcome.
		return true, 0
	}
	if p.since == nil {
		p.since = map[string]generationSince{}
	}
	s, ok := p.since[bd.Name]
	if !ok || s.generation != bd.Generation {
		s = generationSince{bd.Generation, now}
		p.since[bd.Name] = s
	}
	if waited := now.Sub(s.at); waited < progressDelay {
		return true, progressDelay - waited
	}
	return false, 0
}

func (p *progressHold) forget(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.since, name)
}
