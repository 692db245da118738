package status

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func deployment(name string, gen, observed int64, want, available int32, conds ...appsv1.DeploymentCondition) appsv1.Deployment {
	return appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Generation: gen},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(want)},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: observed, AvailableReplicas: available, Conditions: conds},
	}
}

var (
	notAvailable = appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse,
		Reason: "MinimumReplicasUnavailable", Message: "Deployment does not have minimum availability."}
	available   = appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"}
	deadlineHit = appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
		Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "web-1" has timed out progressing.`}
)

func TestWithWorkloads(t *testing.T) {
	t.Parallel()
	healthy := Result{Installed: installedTrue, Healthy: healthyTrue}
	unhealthy := func(msg string) Result {
		return Result{Installed: installedTrue, Healthy: c("Healthy", "False", "Unhealthy", msg)}
	}
	tests := []struct {
		name string
		in   Result
		w    Workloads
		want Result
	}{
		{name: "no workloads", in: healthy, want: healthy},
		{name: "available deployment", in: healthy, w: Workloads{Deployments: []appsv1.Deployment{deployment("web", 1, 1, 2, 2, available)}}, want: healthy},
		{
			name: "deployment lost its pods",
			in:   healthy,
			w:    Workloads{Deployments: []appsv1.Deployment{deployment("web", 1, 1, 2, 0, notAvailable)}},
			want: unhealthy("Deployment ns/web has 0 of 2 replicas available: Deployment does not have minimum availability (MinimumReplicasUnavailable)"),
		},
		{
			name: "rollout past its deadline",
			in:   healthy,
			w:    Workloads{Deployments: []appsv1.Deployment{deployment("web", 3, 3, 1, 1, available, deadlineHit)}},
			want: unhealthy(`Deployment ns/web has 1 of 1 replicas available: ReplicaSet "web-1" has timed out progressing (ProgressDeadlineExceeded)`),
		},
		{
			name: "a generation the controller has not seen is not judged",
			in:   healthy,
			w:    Workloads{Deployments: []appsv1.Deployment{deployment("web", 4, 3, 2, 0, notAvailable)}},
			want: healthy,
		},
		{
			name: "statefulset and daemonset, sorted whatever the informer order",
			in:   healthy,
			w: Workloads{
				StatefulSets: []appsv1.StatefulSet{{
					ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db"},
					Status:     appsv1.StatefulSetStatus{AvailableReplicas: 0},
				}},
				DaemonSets: []appsv1.DaemonSet{{
					ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent"},
					Status:     appsv1.DaemonSetStatus{NumberUnavailable: 1, DesiredNumberScheduled: 3},
				}},
			},
			want: unhealthy("DaemonSet ns/agent has 1 of 3 pods unavailable; StatefulSet ns/db has 0 of 1 replicas available"),
		},
		{
			name: "a more specific state is kept",
			in:   Result{Installed: installWait, Healthy: healthyWait},
			w:    Workloads{Deployments: []appsv1.Deployment{deployment("web", 1, 1, 2, 0, notAvailable)}},
			want: Result{Installed: installWait, Healthy: healthyWait},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, WithWorkloads(tt.in, tt.w)); diff != "" {
				t.Errorf("WithWorkloads() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
