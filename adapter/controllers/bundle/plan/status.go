package plan

import (
	"fmt"
	"strings"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
)

// Phase is where an unpack stands.
type Phase int

const (
	// Unpacking: the source is being fetched for the first time.
	Unpacking Phase = iota + 1
	// Unpacked: the content is fetched, valid for its class and kept.
	Unpacked
	// SourceFailed: the source could not be fetched.
	SourceFailed
	// Invalid: the content is not a bundle of the Bundle's class.
	Invalid
	// Failed: something of the adapter's own failed (the content store,
	// a read of the cluster).
	Failed
)

// Outcome is what one reconcile learned of a Bundle's content.
type Outcome struct {
	Phase Phase
	// Resolved is the source pinned to what was unpacked (Unpacked).
	Resolved *rukpakv1alpha1.BundleSource
	// ContentURL is where the content is served (Unpacked); empty when the
	// adapter serves none.
	ContentURL string
	// Source names what is fetched, for messages (status.DescribeSource).
	Source string
	// Cause says why it failed, in the failing part's words.
	Cause string
	// Retrying says the adapter tries again with backoff, at NextAttempt
	// when that is known.
	Retrying    bool
	NextAttempt time.Time
}

// Status is b's status for o, as rukpak v0.16's Bundle controller reported
// it: the phase, the one Unpacked condition with its reasons, the
// resolved source and contentURL while unpacked (cleared otherwise), and
// observedGeneration. A status that says the same keeps its transition time.
func Status(b *rukpakv1alpha1.Bundle, o Outcome, now time.Time) rukpakv1alpha1.BundleStatus {
	st := *b.Status.DeepCopy()
	kind := b.Spec.Source.Type
	retrying := status.Retrying(o.Retrying, o.NextAttempt)
	var c metav1.Condition
	switch o.Phase {
	case Unpacking:
		st.Phase = rukpakv1alpha1.PhaseUnpacking
		c = cond(metav1.ConditionFalse, rukpakv1alpha1.ReasonUnpacking, fmt.Sprintf("Unpacking the %s Bundle: fetching %s", kind, o.Source))
	case Unpacked:
		st.Phase = rukpakv1alpha1.PhaseUnpacked
		c = cond(metav1.ConditionTrue, rukpakv1alpha1.ReasonUnpackSuccessful, fmt.Sprintf("Successfully unpacked the %s Bundle", kind))
	case SourceFailed:
		st.Phase = rukpakv1alpha1.PhaseFailing
		c = cond(metav1.ConditionFalse, rukpakv1alpha1.ReasonUnpackFailed, status.SourceFailedMessage(explain(o.Cause), o.Source)+retrying)
	case Invalid:
		st.Phase = rukpakv1alpha1.PhaseFailing
		c = cond(metav1.ConditionFalse, rukpakv1alpha1.ReasonUnpackFailed, "invalid bundle: "+explain(o.Cause))
	default:
		st.Phase = rukpakv1alpha1.PhaseFailing
		c = cond(metav1.ConditionFalse, rukpakv1alpha1.ReasonUnpackFailed,
			fmt.Sprintf("The %s Bundle could not be unpacked: %s%s", kind, explain(o.Cause), retrying))
	}
	c.ObservedGeneration = b.Generation
	c.LastTransitionTime = metav1.NewTime(now)
	apimeta.SetStatusCondition(&st.Conditions, c)
	st.ObservedGeneration = b.Generation
	st.ResolvedSource, st.ContentURL = nil, ""
	if o.Phase == Unpacked {
		st.ResolvedSource = o.Resolved.DeepCopy()
		st.ContentURL = o.ContentURL
	}
	return st
}

func cond(s metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: rukpakv1alpha1.TypeUnpacked, Status: s, Reason: reason, Message: msg}
}

// explain is a cause cleaned for a condition (no credentials, bounded,
// stable); never empty.
func explain(cause string) string {
	if c := strings.TrimSpace(cause); c == "" || c == "<nil>" {
		return "the adapter was given no cause; its log has the failure"
	}
	return status.Message(cause)
}
