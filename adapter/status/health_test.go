package status

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// obj is an installed object as its YAML says.
func obj(t testing.TB, y string) unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	var u unstructured.Unstructured
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	return u
}

const (
	availableDeployment = `{apiVersion: apps/v1, kind: Deployment, metadata: {namespace: ns, name: web, generation: 1},
  spec: {replicas: 2}, status: {observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2,
  conditions: [{type: Available, status: "True"}, {type: Progressing, status: "True", reason: NewReplicaSetAvailable}]}}`
	lostPods = `{apiVersion: apps/v1, kind: Deployment, metadata: {namespace: ns, name: web, generation: 1},
  spec: {replicas: 2}, status: {observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 0, availableReplicas: 0,
  conditions: [{type: Available, status: "False", reason: MinimumReplicasUnavailable}]}}`
	pastDeadline = `{apiVersion: apps/v1, kind: Deployment, metadata: {namespace: ns, name: api, generation: 3},
  spec: {replicas: 1}, status: {observedGeneration: 3, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1,
  conditions: [{type: Progressing, status: "False", reason: ProgressDeadlineExceeded, message: "ReplicaSet \"api-1\" has timed out progressing."}]}}`
	unseenGeneration = `{apiVersion: apps/v1, kind: Deployment, metadata: {namespace: ns, name: web, generation: 4},
  spec: {replicas: 2}, status: {observedGeneration: 3, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2}}`
	readyCluster = `{apiVersion: rabbitmq.com/v1beta1, kind: RabbitmqCluster, metadata: {namespace: mq, name: one, generation: 2},
  status: {observedGeneration: 2, conditions: [{type: Ready, status: "True"}]}}`
	notReadyCluster = `{apiVersion: rabbitmq.com/v1beta1, kind: RabbitmqCluster, metadata: {namespace: mq, name: two, generation: 2},
  status: {observedGeneration: 2, conditions: [{type: Ready, status: "False", reason: NoQuorum, message: "2 of 3 nodes are down."}]}}`
	stalledCertificate = `{apiVersion: cert-manager.io/v1, kind: Certificate, metadata: {namespace: mq, name: tls, generation: 1},
  status: {conditions: [{type: Stalled, status: "True", reason: IssuerMissing, message: "issuer ca not found"}]}}`
	silentResource = `{apiVersion: example.com/v1, kind: Widget, metadata: {name: w, generation: 1}, status: {phase: Running}}`
	terminating    = `{apiVersion: example.com/v1, kind: Widget, metadata: {namespace: ns, name: going, deletionTimestamp: "2026-12-06T08:00:00Z"}}`
	configMap      = `{apiVersion: v1, kind: ConfigMap, metadata: {namespace: ns, name: settings}}`
)

func TestHealth(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		objects   []string
		unread    []Unread
		unhealthy bool
		// message is empty when every object is Current.
		message string
	}{
		{name: "nothing judged"},
		{name: "an available deployment and a ready custom resource", objects: []string{availableDeployment, readyCluster, configMap}},
		{
			name: "a deployment that lost its pods", objects: []string{lostPods, readyCluster}, unhealthy: true,
			message: "1 of the 2 installed objects judged is not Current (1 InProgress, 1 Current): Deployment ns/web is InProgress: Available: 0/2",
		},
		{
			name: "a rollout past its deadline is Failed", objects: []string{pastDeadline}, unhealthy: true,
			message: "1 of the 1 installed objects judged is not Current (1 Failed): Deployment ns/api is Failed: Progress deadline exceeded",
		},
		{
			name: "a generation its controller has not seen is in progress", objects: []string{unseenGeneration}, unhealthy: true,
			message: "1 of the 1 installed objects judged is not Current (1 InProgress): Deployment ns/web is InProgress: Deployment generation is 4, but latest observed generation is 3",
		},
		{
			name: "custom resources: Ready False, Stalled, none that says, the worst first", unhealthy: true,
			objects: []string{silentResource, notReadyCluster, stalledCertificate, readyCluster},
			message: "3 of the 4 installed objects judged are not Current (1 Failed, 1 InProgress, 1 Unknown, 1 Current): " +
				"Certificate mq/tls is Failed: issuer ca not found; RabbitmqCluster mq/two is InProgress: 2 of 3 nodes are down; " +
				"Widget w is Unknown: it has no Ready condition, nor a Reconciling or Stalled one, that says whether it is ready",
		},
		{
			name: "only objects that cannot be judged: not unhealthy", objects: []string{silentResource, availableDeployment},
			message: "1 of the 2 installed objects judged is not Current (1 Unknown, 1 Current): " +
				"Widget w is Unknown: it has no Ready condition, nor a Reconciling or Stalled one, that says whether it is ready",
		},
		{
			name: "a kind not read, and more than three named", unhealthy: true,
			objects: []string{terminating, lostPods, pastDeadline, notReadyCluster},
			unread:  []Unread{{Kind: schema.GroupKind{Group: "example.com", Kind: "Gadget"}, Why: "the adapter has not listed them yet"}},
			message: "5 of the 5 installed objects judged are not Current (1 Failed, 1 Terminating, 2 InProgress, 1 Unknown): " +
				"Deployment ns/api is Failed: Progress deadline exceeded; Widget ns/going is Terminating: Resource scheduled for deletion; " +
				"Deployment ns/web is InProgress: Available: 0/2; and 2 more",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := Installed{Unread: tt.unread}
			// Informer order is arbitrary: the message is the same backwards.
			for i := len(tt.objects) - 1; i >= 0; i-- {
				in.Objects = append(in.Objects, obj(t, tt.objects[i]))
			}
			h := in.Judge()
			if h.Unhealthy() != tt.unhealthy {
				t.Errorf("Unhealthy() = %v, want %v", h.Unhealthy(), tt.unhealthy)
			}
			var got string
			if len(h.NotCurrent) > 0 {
				got = h.Message()
			}
			if diff := cmp.Diff(tt.message, got); diff != "" {
				t.Errorf("message mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsCustom(t *testing.T) {
	t.Parallel()
	for gk, want := range map[schema.GroupKind]bool{
		{Kind: "ConfigMap"}:                 false,
		{Group: "apps", Kind: "Deployment"}: false,
		{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: false,
		{Group: "rabbitmq.com", Kind: "RabbitmqCluster"}:                  true,
		{Group: "gateway.networking.k8s.io", Kind: "Gateway"}:             true,
	} {
		if got := IsCustom(gk); got != want {
			t.Errorf("IsCustom(%s) = %v, want %v", gk, got, want)
		}
	}
}
