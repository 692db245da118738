package adapter

import (
	"sync"
	"time"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// progressClock remembers, per BundleDeployment generation, since when it
// has been in progress without a status write: the fact the status
// computation's progress hold needs and the stored status cannot hold.
type progressClock struct {
	mu    sync.Mutex
	since map[string]generationSince
}

type generationSince struct {
	generation int64
	at         time.Time
}

// seen is when bd's current generation was first seen in progress,
// starting the clock now if it was not.
func (p *progressClock) seen(bd *rukpakv1alpha2.BundleDeployment, now time.Time) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.since == nil {
		p.since = map[string]generationSince{}
	}
	s, ok := p.since[bd.Name]
	if !ok || s.generation != bd.Generation {
		s = generationSince{bd.Generation, now}
		p.since[bd.Name] = s
	}
	return s.at
}

func (p *progressClock) forget(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.since, name)
}
