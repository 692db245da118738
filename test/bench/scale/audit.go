package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
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

// byKind lists the counts largest first.
func (c apiCount) byKind() string {
	kinds := slices.Collect(maps.Keys(c.ByKind))
	slices.SortFunc(kinds, func(a, b string) int { return cmp.Or(c.ByKind[b]-c.ByKind[a], strings.Compare(a, b)) })
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, c.ByKind[k]))
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
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	defer f.Close()
	out := map[string]apiCount{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			continue
		}
		if ev.RequestReceivedTimestamp.Before(from) || !ev.RequestReceivedTimestamp.Before(to) {
			continue
		}
		c := out[clientOf(ev)]
		c.Requests++
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
	}
	return out, sc.Err()
}

// clientOf names the component behind a request.
func clientOf(ev auditEvent) string {
	u, agent := ev.User.Username, ev.UserAgent
	switch {
	case u == "system:serviceaccount:rukpak-system:rukpak-kapp":
		return "adapter"
	case u == "system:serviceaccount:rukpak-system:rukpak-kapp-installer":
		return "kapp"
	case u == "system:serviceaccount:"+floorApps+":"+installer:
		return "kapp (floor)"
	case u == "system:serviceaccount:kapp-controller:kapp-controller-floor":
		return "kapp-controller (floor)"
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
