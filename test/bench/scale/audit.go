package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
)

// apiCount is what one client did in a window.
type apiCount struct {
	Requests, Writes, EventWrites int
	// Written names the first writes, so a write where none was expected
	// (at rest) can be traced to its object.
	Written []auditWrite
	// ByKind counts writes by verb and resource, which says where the
	// writes per BundleDeployment go.
	ByKind map[string]int
	// PerSecond counts requests by the second they were received in (Unix
	// time), to see a client-side rate limit as a flat top.
	PerSecond map[int64]int
	// Verbs counts every request by verb and resource: where a
	// controller's requests per App go.
	Verbs map[string]int
}

// auditWrite is one write as the audit log has it.
type auditWrite struct {
	At                                           time.Time
	Verb, Resource, Subresource, Namespace, Name string
}

func (w auditWrite) String() string {
	obj := w.Name
	if w.Namespace != "" {
		obj = w.Namespace + "/" + w.Name
	}
	return fmt.Sprintf("%s %s %s", w.At.Format(time.TimeOnly), w.kind(), obj)
}

func (w auditWrite) kind() string {
	if w.Subresource != "" {
		return w.Verb + " " + w.Resource + "/" + w.Subresource
	}
	return w.Verb + " " + w.Resource
}

// byKind lists the writes by kind, largest first.
func (c apiCount) byKind() string { return largestFirst(c.ByKind) }

func largestFirst(counts map[string]int) string {
	kinds := slices.Collect(maps.Keys(counts))
	slices.SortFunc(kinds, func(a, b string) int { return cmp.Or(counts[b]-counts[a], strings.Compare(a, b)) })
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
	}
	return strings.Join(parts, ", ")
}

// keptWrites bounds Written: enough to trace a few, not a whole install.
const keptWrites = 20

type auditEvent struct {
	Verb                     string    `json:"verb"`
	UserAgent                string    `json:"userAgent"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
	User                     struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
}

var writeVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true, "apply": true}

// countRequests reads the API server's audit log and counts requests and
// writes by client in [from, to). Long-running watches count once.
func countRequests(path string, from, to time.Time) (map[string]apiCount, error) {
	out := map[string]apiCount{}
	err := eachAuditEvent(path, 0, func(ev auditEvent) {
		if ev.RequestReceivedTimestamp.Before(from) || !ev.RequestReceivedTimestamp.Before(to) {
			return
		}
		c := out[clientOf(ev)]
		c.Requests++
		if c.PerSecond == nil {
			c.PerSecond = map[int64]int{}
		}
		c.PerSecond[ev.RequestReceivedTimestamp.Unix()]++
		if c.Verbs == nil {
			c.Verbs = map[string]int{}
		}
		o := ev.ObjectRef
		c.Verbs[auditWrite{Verb: ev.Verb, Resource: o.Resource, Subresource: o.Subresource}.kind()]++
		if writeVerbs[ev.Verb] {
			c.Writes++
			if ev.ObjectRef.Resource == "events" {
				c.EventWrites++
			}
			o := ev.ObjectRef
			w := auditWrite{At: ev.RequestReceivedTimestamp, Verb: ev.Verb,
				Resource: o.Resource, Subresource: o.Subresource, Namespace: o.Namespace, Name: o.Name}
			if len(c.Written) < keptWrites {
				c.Written = append(c.Written, w)
			}
			if c.ByKind == nil {
				c.ByKind = map[string]int{}
			}
			c.ByKind[w.kind()]++
		}
		out[clientOf(ev)] = c
	})
	return out, err
}

// eachAuditEvent calls fn with each line of the audit log from offset on,
// decoded into an E; a line that does not decode (one cut short while the
// API server writes it) is skipped.
func eachAuditEvent[E any](path string, offset int64, fn func(E)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open audit log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return fmt.Errorf("read audit log: %w", err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev E
		if err := json.Unmarshal(sc.Bytes(), &ev); err == nil {
			fn(ev)
		}
	}
	return sc.Err()
}

// auditSize is where the audit log ends now: a window that starts now is
// read from there (a line is written when its request completes, so none
// received later lies before it).
func auditSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("read audit log: %w", err)
	}
	return fi.Size(), nil
}

// clientOf names the component behind a request.
func clientOf(ev auditEvent) string {
	u, agent := ev.User.Username, ev.UserAgent
	switch {
	case u == "system:serviceaccount:rukpak-system:rukpak-kapp":
		return "adapter"
	case strings.HasPrefix(u, "system:serviceaccount:"+floorApps) && strings.HasSuffix(u, ":"+installer):
		return "kapp (floor)"
	case strings.HasPrefix(u, "system:serviceaccount:kapp-controller:kapp-controller-floor"):
		return "kapp-controller (floor)"
	case strings.HasPrefix(u, "system:serviceaccount:") && strings.HasSuffix(u, ":"+installer):
		// The installer account of the system namespace or of an app namespace.
		return "kapp"
	case strings.HasPrefix(agent, "kapp-controller/"):
		return "kapp-controller"
	case strings.HasPrefix(agent, "rukpak-core/"):
		return "rukpak"
	case strings.HasPrefix(agent, "kube-controller-manager/"), strings.HasPrefix(u, "system:kube-controller-manager"):
		return "kube-controller-manager"
	case strings.HasPrefix(agent, "kwok/"), strings.HasPrefix(agent, "kube-scheduler/"):
		return "nodes"
	case strings.HasPrefix(agent, benchAgent):
		return "benchmark"
	}
	return "other"
}

// rate is a client's requests per second over [from, to): the mean, the
// median second and the busiest second.
type rate struct{ Mean, P50, Max float64 }

func (c apiCount) rate(from, to time.Time) rate {
	secs := to.Unix() - from.Unix() + 1
	if secs <= 0 {
		return rate{}
	}
	per := make([]int, 0, secs)
	for s := from.Unix(); s <= to.Unix(); s++ {
		per = append(per, c.PerSecond[s])
	}
	slices.Sort(per)
	return rate{Mean: float64(c.Requests) / to.Sub(from).Seconds(), P50: float64(per[len(per)/2]), Max: float64(per[len(per)-1])}
}
