package status

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// Workloads are the installed objects whose readiness can change after kapp
// finished: kapp-controller only looks at them while a deploy runs, so a node
// that dies between syncs would otherwise leave Healthy=True.
type Workloads struct {
	Deployments  []appsv1.Deployment
	StatefulSets []appsv1.StatefulSet
	DaemonSets   []appsv1.DaemonSet
}

// joinProblems is one message for every workload that lost readiness;
// the problems come sorted, so the message does not flap with informer order.
func joinProblems(problems []string) string { return strings.Join(problems, "; ") }

func (w Workloads) problems() []string {
	var out []string
	for i := range w.Deployments {
		if p := deploymentProblem(&w.Deployments[i]); p != "" {
			out = append(out, p)
		}
	}
	for i := range w.StatefulSets {
		if p := statefulSetProblem(&w.StatefulSets[i]); p != "" {
			out = append(out, p)
		}
	}
	for i := range w.DaemonSets {
		if p := daemonSetProblem(&w.DaemonSets[i]); p != "" {
			out = append(out, p)
		}
	}
	// Informer order is arbitrary; the message must not flap with it.
	slices.Sort(out)
	return out
}

func deploymentProblem(d *appsv1.Deployment) string {
	// A rollout the controller has not looked at yet says nothing about
	// readiness; kapp waits for it during a deploy.
	if d.Status.ObservedGeneration < d.Generation {
		return ""
	}
	for _, c := range d.Status.Conditions {
		lost := c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionFalse
		stuck := c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse
		if lost || stuck {
			return fmt.Sprintf("Deployment %s/%s has %d of %d replicas available: %s",
				d.Namespace, d.Name, d.Status.AvailableReplicas, replicas(d.Spec.Replicas), reasonText(c.Reason, c.Message))
		}
	}
	return ""
}

func statefulSetProblem(s *appsv1.StatefulSet) string {
	if s.Status.ObservedGeneration < s.Generation {
		return ""
	}
	if want := replicas(s.Spec.Replicas); s.Status.AvailableReplicas < want {
		return fmt.Sprintf("StatefulSet %s/%s has %d of %d replicas available", s.Namespace, s.Name, s.Status.AvailableReplicas, want)
	}
	return ""
}

func daemonSetProblem(d *appsv1.DaemonSet) string {
	if d.Status.ObservedGeneration < d.Generation {
		return ""
	}
	if d.Status.NumberUnavailable > 0 {
		return fmt.Sprintf("DaemonSet %s/%s has %d of %d pods unavailable",
			d.Namespace, d.Name, d.Status.NumberUnavailable, d.Status.DesiredNumberScheduled)
	}
	return ""
}

// replicas is the API default when the field is unset.
func replicas(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

func reasonText(reason, msg string) string {
	msg = strings.TrimSpace(msg)
	switch {
	case msg == "":
		return reason
	case reason == "":
		return msg
	}
	return fmt.Sprintf("%s (%s)", strings.TrimSuffix(msg, "."), reason)
}
