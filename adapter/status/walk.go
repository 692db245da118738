package status

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// withWalk says where a walk along the channel is. While a step is under
// way, Installed stays what it was (kapp-controller's wait for this
// generation goes on) and Progressing names the path and the step. A
// failure stops the walk: Installed and Progressing say which step failed
// and which version stays installed. At the end, Installed names the path
// and Progressing goes.
func (s state) withWalk(c conditions) conditions {
	w := s.Walk
	if w == nil || !s.BD.DeletionTimestamp.IsZero() {
		return c
	}
	installedNow := w.Versions[w.Step-1]
	if w.final() && c.installed.Status == metav1.ConditionTrue && c.installed.ObservedGeneration == s.gen {
		installedNow = w.Versions[w.Step]
	}
	if failed, ok := walkFailure(c, s.gen); ok {
		msg := fmt.Sprintf("The upgrade along channel %s (%s) stopped at %s; %s stays installed: %s", w.Channel, w.path(), w.Versions[w.Step], installedNow, failed.Message)
		p := s.condNew(rukpakv1alpha2.TypeProgressing, metav1.ConditionFalse, rukpakv1alpha2.ReasonUpgradeStopped, Message(msg))
		c.progressing = &p
		if c.installed.Status == metav1.ConditionFalse {
			c.installed.Message = p.Message
		}
		return c
	}
	if w.final() && c.installed.Status == metav1.ConditionTrue && c.installed.ObservedGeneration == s.gen {
		c.installed.Message = Message(fmt.Sprintf("%s; upgraded along channel %s one edge at a time: %s", c.installed.Message, w.Channel, w.path()))
		return c
	}
	doing := fmt.Sprintf("%s: installing %s (%s is installed)", w.path(), w.Versions[w.Step], installedNow)
	if g := w.Gate; g != nil && !g.Stopped {
		until := ""
		if !g.Deadline.IsZero() {
			until = ", until " + g.Deadline.UTC().Format(time.RFC3339) + " at most,"
		}
		doing = fmt.Sprintf("%s: %s is deployed and the next step waits%s for its installed objects to be Current (%s is installed): %s",
			w.path(), w.Versions[w.Step], until, installedNow, g.Why)
	}
	p := s.condNew(rukpakv1alpha2.TypeProgressing, metav1.ConditionTrue, rukpakv1alpha2.ReasonUpgrading, Message(doing))
	c.progressing = &p
	return c
}

// walkFailure is the condition that says this generation's step failed.
func walkFailure(c conditions, gen int64) (metav1.Condition, bool) {
	if c.installed.Status == metav1.ConditionFalse && c.installed.ObservedGeneration == gen {
		return c.installed, true
	}
	if c.unpacked.Status == metav1.ConditionFalse && c.unpacked.Reason == rukpakv1alpha2.ReasonUnpackFailed {
		return c.unpacked, true
	}
	return metav1.Condition{}, false
}

// ReasonUpgradeStep is the reason of the Event a walk along the channel
// records for each step it starts (note: StepNote).
const ReasonUpgradeStep = "UpgradeStep"

// StepNote is the Event a walk's step records when its App is written.
func (w *Walk) StepNote() string {
	return fmt.Sprintf("Upgrading along channel %s (%s): installing %s, step %d of %d", w.Channel, w.path(), w.Versions[w.Step], w.Step, len(w.Versions)-1)
}
