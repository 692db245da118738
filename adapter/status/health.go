package status

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Installed are the installed objects Healthy is judged by once kapp
// finished: kapp-controller only looks at them while a deploy runs, so a
// node that dies or a custom resource whose controller fails between syncs
// would otherwise leave Healthy=True. They are the workloads (Deployments,
// StatefulSets, DaemonSets) and the custom resources; every other built-in
// kind is one kapp waited for during the deploy, and whose readiness
// nothing changes after it.
type Installed struct {
	// Objects are the installed objects read, with their status.
	Objects []unstructured.Unstructured
	// Unread are kinds installed whose objects could not be read (yet).
	Unread []Unread
	// Rules judge the kinds kstatus cannot (HealthRulesOf).
	Rules HealthRules
	// RulesInvalid says why the BundleDeployment's expressions cannot be
	// read; empty when they can.
	RulesInvalid string
}

// Unread is an installed kind whose objects the adapter could not read,
// and why, as a sentence.
type Unread struct {
	Kind schema.GroupKind
	Why  string
}

// Judged is one installed object's state, as kstatus computes it.
type Judged struct {
	// Object names the object: Kind namespace/name.
	Object string
	State  kstatus.Status
	// Message is kstatus's, or the object's own condition's.
	Message string
}

// builtinGroups are the API groups Kubernetes itself serves. A kind of any
// other group is a custom resource.
var builtinGroups = []string{
	"", "apps", "batch", "autoscaling", "policy", "networking.k8s.io", "rbac.authorization.k8s.io",
	"storage.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io", "admissionregistration.k8s.io",
	"scheduling.k8s.io", "coordination.k8s.io", "node.k8s.io", "discovery.k8s.io", "certificates.k8s.io",
	"flowcontrol.apiserver.k8s.io", "events.k8s.io", "resource.k8s.io", "storagemigration.k8s.io",
	"internal.apiserver.k8s.io",
}

// IsCustom says whether gk is a custom resource's kind (its group is not
// one Kubernetes serves itself).
func IsCustom(gk schema.GroupKind) bool { return !slices.Contains(builtinGroups, gk.Group) }

// judgeWith computes u's state with kstatus. kstatus counts an object of a
// kind it has no rules for, and that says nothing of its state, as Current;
// a custom resource is Current here only when it says so (a Ready
// condition): one that says nothing is Unknown, never healthy by default.
// The expression of rules for u's kind, if any, is used in place of
// kstatus's rules (an object being deleted is Terminating whatever its
// expression says).
func judgeWith(u *unstructured.Unstructured, rules HealthRules) Judged {
	j := Judged{Object: objectName(u)}
	if e, ok := rules[u.GroupVersionKind().GroupKind()]; ok && u.GetDeletionTimestamp() == nil {
		j.State, j.Message = e.judge(u)
		return j
	}
	res, err := kstatus.Compute(u)
	if err != nil {
		j.State, j.Message = kstatus.UnknownStatus, fmt.Sprintf("its status cannot be read: %v", err)
		return j
	}
	j.State, j.Message = res.Status, res.Message
	if res.Status == kstatus.CurrentStatus && IsCustom(u.GroupVersionKind().GroupKind()) && !hasReady(u) {
		j.State = kstatus.UnknownStatus
		j.Message = "it has no Ready condition, nor a Reconciling or Stalled one, that says whether it is ready"
	}
	return j
}

// hasReady says whether u carries a Ready condition (kstatus judged it by
// that condition).
func hasReady(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			return true
		}
	}
	return false
}

func objectName(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return fmt.Sprintf("%s %s", u.GetKind(), u.GetName())
	}
	return fmt.Sprintf("%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
}

// stateOrder is the order states are counted and named in: the worst first.
var stateOrder = []kstatus.Status{
	kstatus.FailedStatus, kstatus.TerminatingStatus, kstatus.NotFoundStatus, kstatus.InProgressStatus,
	kstatus.UnknownStatus, kstatus.CurrentStatus,
}

// named is how many objects not Current a message names.
const named = 3

// Health is the installed objects' roll-up: how many are in each state,
// and the first ones that are not Current.
type Health struct {
	// Counts is how many objects are in each state.
	Counts map[kstatus.Status]int
	// NotCurrent are the objects (and unread kinds, as Unknown) that are
	// not Current, the worst first, then by name.
	NotCurrent []Judged
}

// Judge rolls the installed objects up.
func (in Installed) Judge() Health {
	h := Health{Counts: map[kstatus.Status]int{}}
	if in.RulesInvalid != "" {
		h.Counts[kstatus.UnknownStatus]++
		h.NotCurrent = append(h.NotCurrent, Judged{Object: "the annotation " + rukpakv1alpha2.AnnotationHealthExpressions, State: kstatus.UnknownStatus, Message: in.RulesInvalid})
	}
	for i := range in.Objects {
		j := judgeWith(&in.Objects[i], in.Rules)
		h.Counts[j.State]++
		if j.State != kstatus.CurrentStatus {
			h.NotCurrent = append(h.NotCurrent, j)
		}
	}
	for _, u := range in.Unread {
		h.Counts[kstatus.UnknownStatus]++
		h.NotCurrent = append(h.NotCurrent, Judged{Object: "every " + u.Kind.String(), State: kstatus.UnknownStatus, Message: u.Why})
	}
	// Informer order is arbitrary; the message must not flap with it.
	slices.SortFunc(h.NotCurrent, func(a, b Judged) int {
		if d := slices.Index(stateOrder, a.State) - slices.Index(stateOrder, b.State); d != 0 {
			return d
		}
		return strings.Compare(a.Object, b.Object)
	})
	return h
}

// Unhealthy says whether an object is Failed, Terminating, NotFound or
// InProgress: Healthy is False.
func (h Health) Unhealthy() bool {
	return len(h.NotCurrent) > 0 && h.NotCurrent[0].State != kstatus.UnknownStatus
}

// Failed says whether an object is Failed, being deleted or gone: what no
// wait ends.
func (h Health) Failed() bool {
	return len(h.NotCurrent) > 0 && slices.Contains([]kstatus.Status{kstatus.FailedStatus, kstatus.TerminatingStatus, kstatus.NotFoundStatus}, h.NotCurrent[0].State)
}

// Message says how many objects are in each state and names the first
// ones that are not Current, each with why.
func (h Health) Message() string {
	total, counts := 0, make([]string, 0, len(stateOrder))
	for _, s := range stateOrder {
		if n := h.Counts[s]; n > 0 {
			total += n
			counts = append(counts, fmt.Sprintf("%d %s", n, s))
		}
	}
	var b strings.Builder
	verb := "are"
	if len(h.NotCurrent) == 1 {
		verb = "is"
	}
	fmt.Fprintf(&b, "%d of the %d installed objects judged %s not Current (%s): ", len(h.NotCurrent), total, verb, strings.Join(counts, ", "))
	for i, j := range h.NotCurrent {
		if i == named {
			fmt.Fprintf(&b, "; and %d more", len(h.NotCurrent)-named)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s is %s", j.Object, j.State)
		if m := strings.TrimSuffix(strings.TrimSpace(j.Message), "."); m != "" {
			fmt.Fprintf(&b, ": %s", m)
		}
	}
	return b.String()
}
