package status

import (
	"strings"
	"testing"
	"time"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// costly is a nested comprehension over a list of ten, ten levels deep:
// ten billion steps, which no reconcile worker may be pinned on.
const costly = "status.items.all(a, status.items.all(b, status.items.all(c, status.items.all(d, status.items.all(e, status.items.all(f, status.items.all(g, status.items.all(h, status.items.all(i, status.items.all(j, true))))))))))"

func TestHealthExpressions(t *testing.T) {
	t.Parallel()
	const phases = `- apiVersion: example.com/v1
  kind: Widget
  current: status.phase == 'Running'
  failed: status.phase == 'Failed'
  inProgress: "has(status.pending) && status.pending > 0"
`
	widget := func(status string) string {
		return `{apiVersion: example.com/v2, kind: Widget, metadata: {namespace: ns, name: w}, status: ` + status + `}`
	}
	tests := []struct {
		name        string
		annotation  string
		object      string
		state       kstatus.Status
		message     string
		invalidRule string
	}{
		{name: "current, whatever the version read", annotation: phases, object: widget("{phase: Running}"), state: kstatus.CurrentStatus,
			message: "status.phase == 'Running' (core.rukpak.io/health-expressions)"},
		{name: "failed", annotation: phases, object: widget("{phase: Failed}"), state: kstatus.FailedStatus,
			message: "status.phase == 'Failed' (core.rukpak.io/health-expressions)"},
		{name: "in progress first", annotation: phases, object: widget("{phase: Running, pending: 2}"), state: kstatus.InProgressStatus,
			message: "has(status.pending) && status.pending > 0 (core.rukpak.io/health-expressions)"},
		{name: "none true: in progress", annotation: phases, object: widget("{phase: Starting}"), state: kstatus.InProgressStatus,
			message: "none of its health expressions is true yet (current: status.phase == 'Running')"},
		{name: "no status yet: in progress", annotation: phases, object: `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}}`,
			state: kstatus.InProgressStatus, message: "none of its health expressions is true yet (current: status.phase == 'Running')"},
		{name: "being deleted: Terminating whatever the expressions say", annotation: phases,
			object: `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, deletionTimestamp: "2026-12-06T08:00:00Z"}, status: {phase: Running}}`,
			state:  kstatus.TerminatingStatus, message: "Resource scheduled for deletion"},
		{name: "an expression that does not compile", annotation: "[{apiVersion: example.com/v1, kind: Widget, current: 'status.phase =='}]",
			object: widget("{phase: Running}"), state: kstatus.UnknownStatus},
		{name: "an expression over spec does not compile: the object is Unknown, the expression named", annotation: "[{apiVersion: example.com/v1, kind: Widget, current: 'spec.replicas > 0'}]",
			object: `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, spec: {replicas: 1}, status: {phase: Running}}`, state: kstatus.UnknownStatus,
			message: `its health expression "spec.replicas > 0" (core.rukpak.io/health-expressions) does not compile: ERROR: <input>:1:1: undeclared reference to 'spec' (in container '')
 | spec.replicas > 0
 | ^ (an expression reads metadata and status only)`},
		{name: "a ServiceMonitor, by default", object: `{apiVersion: monitoring.coreos.com/v1, kind: ServiceMonitor, metadata: {namespace: ns, name: m}}`,
			state: kstatus.CurrentStatus, message: "true (core.rukpak.io/health-expressions)"},
		{name: "an annotation that is no list: the defaults still judge", annotation: "current: true",
			object: `{apiVersion: monitoring.coreos.com/v1, kind: PrometheusRule, metadata: {namespace: ns, name: r}}`,
			state:  kstatus.CurrentStatus, message: "true (core.rukpak.io/health-expressions)",
			invalidRule: "the annotation core.rukpak.io/health-expressions is not a list of {apiVersion, kind, current, inProgress, failed}"},
		{name: "an entry without current", annotation: "[{apiVersion: example.com/v1, kind: Widget}]", object: widget("{phase: Running}"),
			state: kstatus.UnknownStatus, message: "it has no Ready condition, nor a Reconciling or Stalled one, that says whether it is ready",
			invalidRule: "the annotation core.rukpak.io/health-expressions has an entry without kind or current: each needs both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rules, err := HealthRulesOf(map[string]string{rukpakv1alpha2.AnnotationHealthExpressions: tt.annotation})
			if gotErr := errString(err); len(gotErr) < len(tt.invalidRule) || gotErr[:len(tt.invalidRule)] != tt.invalidRule || (tt.invalidRule == "" && err != nil) {
				t.Fatalf("HealthRulesOf error %q, want it to start with %q", gotErr, tt.invalidRule)
			}
			u := obj(t, tt.object)
			j := judgeWith(&u, rules)
			if j.State != tt.state {
				t.Errorf("state %s (%s), want %s", j.State, j.Message, tt.state)
			}
			if tt.message != "" {
				if diff := cmp.Diff(tt.message, j.Message); diff != "" {
					t.Errorf("message (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// An expression is users' input: one that would pin a reconcile worker
// is stopped at its cost limit, within moments, and named.
func TestHealthExpression_CostLimit(t *testing.T) {
	t.Parallel()
	rules, err := HealthRulesOf(map[string]string{rukpakv1alpha2.AnnotationHealthExpressions: "[{apiVersion: example.com/v1, kind: Widget, current: '" + costly + "'}]"})
	if err != nil {
		t.Fatal(err)
	}
	u := obj(t, `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, status: {items: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}}`)
	start := time.Now()
	j := judgeWith(&u, rules)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the expression ran for %s", took)
	}
	if j.State != kstatus.UnknownStatus || !strings.Contains(j.Message, "was stopped: it costs more than the limit of 1000000") || !strings.Contains(j.Message, costly) {
		t.Errorf("%s: %q, want Unknown naming the expression and its limit", j.State, j.Message)
	}
}

// Within the cost limit, an evaluation is bounded in time too. Not
// parallel: it sets the limit every test's evaluations use.
func TestHealthExpression_TimeLimit(t *testing.T) {
	defer func(was time.Duration) { expressionTimeLimit = was }(expressionTimeLimit)
	expressionTimeLimit = time.Nanosecond
	const nested = "status.items.all(a, status.items.all(b, status.items.all(c, true)))"
	rules, err := HealthRulesOf(map[string]string{rukpakv1alpha2.AnnotationHealthExpressions: "[{apiVersion: example.com/v1, kind: Widget, current: '" + nested + "'}]"})
	if err != nil {
		t.Fatal(err)
	}
	u := obj(t, `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w}, status: {items: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}}`)
	j := judgeWith(&u, rules)
	if j.State != kstatus.UnknownStatus || !strings.Contains(j.Message, "was stopped: it ran longer than the 1ns an expression may") || !strings.Contains(j.Message, nested) {
		t.Errorf("%s: %q, want Unknown naming the expression and its time limit", j.State, j.Message)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// An annotation that cannot be read is named in the roll-up.
func TestHealth_InvalidRules(t *testing.T) {
	t.Parallel()
	in := Installed{Objects: []unstructured.Unstructured{obj(t, availableDeployment)}, RulesInvalid: "the annotation is no list"}
	h := in.Judge()
	if h.Unhealthy() {
		t.Error("an unreadable annotation made the install unhealthy")
	}
	want := "1 of the 2 installed objects judged is not Current (1 Unknown, 1 Current): the annotation core.rukpak.io/health-expressions is Unknown: the annotation is no list"
	if diff := cmp.Diff(want, h.Message()); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
}

// A kind whose only expression is current: "true" is not read at all.
func TestUnjudged(t *testing.T) {
	t.Parallel()
	rules, err := HealthRulesOf(map[string]string{rukpakv1alpha2.AnnotationHealthExpressions: `[{apiVersion: monitoring.coreos.com/v1, kind: PodMonitor, current: "true", failed: "status.broken"},
{apiVersion: example.com/v1, kind: Setting, current: " true "}]`})
	if err != nil {
		t.Fatal(err)
	}
	for gk, want := range map[schema.GroupKind]bool{
		{Group: "monitoring.coreos.com", Kind: "ServiceMonitor"}: true,
		{Group: "monitoring.coreos.com", Kind: "PodMonitor"}:     false,
		{Group: "example.com", Kind: "Setting"}:                  true,
		{Group: "example.com", Kind: "Widget"}:                   false,
	} {
		if got := rules.Unjudged(gk); got != want {
			t.Errorf("Unjudged(%s) = %v, want %v", gk, got, want)
		}
	}
}
