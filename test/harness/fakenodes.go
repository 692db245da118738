package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FakeNodeName is the kwok node the harness registers.
const FakeNodeName = "fake-node-0"

// startFakeNodes runs kube-scheduler and kwok, and registers one node that
// kwok keeps Ready, so Deployments get scheduled and become Available
// without a kubelet or containers.
func (e *Env) startFakeNodes(ctx context.Context) error {
	cp := e.ControlPlane
	kubeconfig := filepath.Join(cp.Dir, "fake-nodes.kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig, "default"); err != nil {
		return err
	}
	var err error
	if e.scheduler, err = startProcess("kube-scheduler", cp.Dir, e.tools.withGC(e.tools.base), e.tools.logDir, filepath.Join(e.tools.bin, "kube-scheduler"),
		"--kubeconfig", kubeconfig, "--authentication-kubeconfig", kubeconfig, "--authorization-kubeconfig", kubeconfig,
		"--leader-elect=false", "--secure-port=0"); err != nil {
		return err
	}
	if e.kwok, err = e.startKwok(); err != nil {
		return err
	}
	return e.AddFakeNode(ctx, FakeNodeName)
}

// KwokAnnotation marks the nodes kwok manages.
const KwokAnnotation = "kwok.x-k8s.io/node"

func (e *Env) startKwok() (*process, error) {
	cp := e.ControlPlane
	stages := filepath.Join(e.tools.bin, "kwok-stages.yaml")
	if _, err := os.Stat(stages); err != nil {
		return nil, fmt.Errorf("kwok stages missing (run make tools): %w", err)
	}
	return startProcess("kwok", cp.Dir, e.tools.withGC(e.tools.base), e.tools.logDir, filepath.Join(e.tools.bin, "kwok"),
		"--kubeconfig", filepath.Join(cp.Dir, "fake-nodes.kubeconfig"), "--config", stages,
		"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector="+KwokAnnotation+"=fake",
		"--cidr=10.244.0.1/24", "--node-ip=10.244.0.1",
		// Leases renewed every 2s give the node controller a heartbeat it
		// can time out quickly (see controllermanager.go).
		"--node-lease-duration-seconds=8")
}

// LoseNodes makes every fake node dead, as when the machines or their
// kubelets are lost: kwok stops, so no heartbeat, lease renewal or pod status
// reaches the API server and the node controller declares the nodes
// unreachable and their pods not ready.
func (e *Env) LoseNodes() { e.kwok.Stop(5 * time.Second) }

// RestoreNodes brings the fake nodes back: kwok starts again, reports them
// Ready and their running pods Ready, as returning kubelets do.
func (e *Env) RestoreNodes(ctx context.Context) error {
	if exited, _ := e.kwok.Exited(); !exited {
		return nil
	}
	var err error
	if e.kwok, err = e.startKwok(); err != nil {
		return err
	}
	if err := e.waitNodeReady(ctx, FakeNodeName); err != nil {
		return err
	}
	return e.resyncPods(ctx, FakeNodeName)
}

// AnnotationKubeletResync is written on the pods of a fake node that
// returns, as a returning kubelet syncs every pod bound to it: kwok skips a
// pod event that comes before it knows the pod's node again (a pod that
// kube-controller-manager marks not Ready as kwok restarts), and only an
// event after that has it ready the pod again.
const AnnotationKubeletResync = "harness.rukpak-kapp.dev/kubelet-resync"

// resyncPods touches every pod bound to node, so kwok looks at each once
// it knows the node.
func (e *Env) resyncPods(ctx context.Context, node string) error {
	pods := &corev1.PodList{}
	if err := e.Client.List(ctx, pods, client.MatchingFields{"spec.nodeName": node}); err != nil {
		return fmt.Errorf("list the pods of node %s: %w", node, err)
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.DeletionTimestamp != nil {
			continue
		}
		patch := client.MergeFrom(pod.DeepCopy())
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[AnnotationKubeletResync] = now
		if err := e.Client.Patch(ctx, pod, patch); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("resync pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	return nil
}

// AddFakeNode registers a node kwok keeps Ready, with the given taints, and
// waits until it is Ready.
func (e *Env) AddFakeNode(ctx context.Context, name string, taints ...corev1.Taint) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{KwokAnnotation: "fake"},
			// The labels a kubelet sets, including the deprecated beta ones
			// that older operators still select on.
			Labels: map[string]string{
				"kubernetes.io/hostname": name, "type": "kwok",
				"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
				"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
			},
		},
		Spec: corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("110"),
		}},
	}
	if err := e.Client.Create(ctx, node); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("register fake node %s: %w", name, err)
	}
	return e.waitNodeReady(ctx, name)
}

func (e *Env) waitNodeReady(ctx context.Context, name string) error {
	return e.kwok.waitFor(ctx, 60*time.Second, "fake node "+name+" Ready", func() error {
		n := &corev1.Node{}
		if err := e.Client.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
			return err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return errNotYet
	})
}
