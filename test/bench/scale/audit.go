package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// apiCount is what one client did in a window.
type apiCount struct{ Requests, Writes, EventWrites int }

type auditEvent struct {
	Verb                     string    `json:"verb"`
	UserAgent                string    `json:"userAgent"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
	User                     struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource string `json:"resource"`
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
