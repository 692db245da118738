package main

import (
	"fmt"
	"io"
	"time"
)

// timelineEvent is an audit line with what a timeline needs beyond the
// counts: when the request completed and how it ended.
type timelineEvent struct {
	auditEvent
	StageTimestamp time.Time `json:"stageTimestamp"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// timelineSettle is how long the audit log is given to receive the last
// requests of an apply (kapp-controller's final status writes land just
// after the one the watch saw).
const timelineSettle = 300 * time.Millisecond

// printTimeline prints every request of the systems under test made from
// the create of one object until it was done, in milliseconds from the
// create: which component waited where. kube-controller-manager's writes
// are kept (a workload controller's write is what makes kapp's next
// update conflict); reads by nodes and controllers are left out.
func printTimeline(out io.Writer, auditLog string, offset int64, name string, createdAt time.Time, took time.Duration) error {
	time.Sleep(timelineSettle)
	fmt.Fprintf(out, "timeline of %s (%s to done): ms from create, ms taken, client, verb, resource, name, code\n", name, secs(took))
	to := createdAt.Add(took + timelineSettle)
	return eachAuditEvent(auditLog, offset, func(ev timelineEvent) {
		at := ev.RequestReceivedTimestamp
		if at.Before(createdAt.Add(-10*time.Millisecond)) || at.After(to) || ev.Verb == "watch" {
			return
		}
		who := clientOf(ev.auditEvent)
		switch {
		case who == "nodes" || who == "other" || who == "benchmark" && ev.Verb != "create":
			return
		case who == "kube-controller-manager" && !writeVerbs[ev.Verb]:
			return
		}
		o := ev.ObjectRef
		resource := o.Resource
		if o.Subresource != "" {
			resource += "/" + o.Subresource
		}
		fmt.Fprintf(out, "  %6d %5d  %-24s %-6s %-28s %s %d\n", at.Sub(createdAt).Milliseconds(),
			ev.StageTimestamp.Sub(at).Milliseconds(), who, ev.Verb, resource, o.Name, ev.ResponseStatus.Code)
	})
}
