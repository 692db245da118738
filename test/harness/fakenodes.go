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
	stages := filepath.Join(e.tools.bin, "kwok-stages.yaml")
	if _, err := os.Stat(stages); err != nil {
		return fmt.Errorf("kwok stages missing (run make tools): %w", err)
	}
	var err error
	if e.scheduler, err = startProcess("kube-scheduler", cp.Dir, e.tools.base, e.tools.logDir, filepath.Join(e.tools.bin, "kube-scheduler"),
		"--kubeconfig", kubeconfig, "--authentication-kubeconfig", kubeconfig, "--authorization-kubeconfig", kubeconfig,
		"--leader-elect=false", "--secure-port=0"); err != nil {
		return err
	}
	if e.kwok, err = startProcess("kwok", cp.Dir, e.tools.base, e.tools.logDir, filepath.Join(e.tools.bin, "kwok"),
		"--kubeconfig", kubeconfig, "--config", stages,
		"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--cidr=10.244.0.1/24", "--node-ip=10.244.0.1"); err != nil {
		return err
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        FakeNodeName,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
			// The labels a kubelet sets, including the deprecated beta ones
			// that older operators still select on.
			Labels: map[string]string{
				"kubernetes.io/hostname": FakeNodeName, "type": "kwok",
				"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
				"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
			},
		},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("110"),
		}},
	}
	if err := e.Client.Create(ctx, node); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("register fake node: %w", err)
	}
	return e.kwok.waitFor(ctx, 60*time.Second, "fake node Ready", func() error {
		n := &corev1.Node{}
		if err := e.Client.Get(ctx, client.ObjectKey{Name: FakeNodeName}, n); err != nil {
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
