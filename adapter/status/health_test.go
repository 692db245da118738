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

func TestWorkloadProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		w    Workloads
		want string
	}{
		{name: "no workloads"},
		{name: "available deployment", w: Workloads{Deployments: []appsv1.Deployment{deployment("web", 1, 1, 2, 2, available)}}},
		{
			name: "deployment lost its pods",
			w:    Workloads{Deployments: []appsv1.Deployment{deployment("web", 1, 1, 2, 0, notAvailable)}},
			want: "Deployment ns/web has 0 of 2 replicas available: Deployment does not have minimum availability (MinimumReplicasUnavailable)",
		},
		{
			name: "rollout past its deadline",
			w:    Workloads{Deployments: []appsv1.Deployment{deployment("web", 3, 3, 1, 1, available, deadlineHit)}},
			want: `Deployment ns/web has 1 of 1 replicas available: ReplicaSet "web-1" has timed out progressing (ProgressDeadlineExceeded)`,
		},
		{
			name: "a generation the controller has not seen is not judged",
			w:    Workloads{Deployments: []appsv1.Deployment{deployment("web", 4, 3, 2, 0, notAvailable)}},
		},
		{
			name: "statefulset and daemonset, sorted whatever the informer order",
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
			want: "DaemonSet ns/agent has 1 of 3 pods unavailable; StatefulSet ns/db has 0 of 1 replicas available",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, joinProblems(tt.w.problems())); diff != "" {
				t.Errorf("problems mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
