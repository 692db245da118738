package e2e_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

var _ = Describe("nodes that die under an installed Deployment", func() {
	It("turns Healthy False naming the Deployment, and True again when they return", func(ctx context.Context) {
		ref, _, err := env.Registry.PushDir(filepath.Join("testdata", "lostnode"), "bundles/lostnode:v1")
		Expect(err).NotTo(HaveOccurred())
		plainBD(ctx, "lostnode", ref)
		// Runs before the BD's own cleanup: kapp cannot finish deleting pods
		// on a dead node, as on a real cluster.
		DeferCleanup(env.RestoreNodes)
		Eventually(getBD(ctx, "lostnode")).Should(haveCondition("Healthy", "True", "Healthy", ""))

		By("stopping the fake nodes (kwok)")
		lost := time.Now()
		env.LoseNodes()
		Eventually(getBD(ctx, "lostnode"), 90*time.Second).Should(haveCondition("Healthy", "False", "Unhealthy",
			"Deployment default/lostnode is InProgress: Available: 0/2"))
		GinkgoWriter.Printf("Healthy=False %s after the nodes stopped\n", time.Since(lost).Round(time.Second))
		Expect(mustBD(ctx, "lostnode")).To(haveCondition("Installed", "True", "InstallationSucceeded", ""))
		dep := &appsv1.Deployment{}
		Expect(env.Client.Get(ctx, objKey("default", "lostnode"), dep)).To(Succeed())
		var unavailableAt time.Time
		for _, c := range dep.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionFalse {
				unavailableAt = c.LastTransitionTime.Time
			}
		}
		Expect(unavailableAt).NotTo(BeZero())
		reported := apimeta.FindStatusCondition(mustBD(ctx, "lostnode").Status.Conditions, "Healthy").LastTransitionTime.Time
		GinkgoWriter.Printf("Healthy=False %s after the Deployment became unavailable\n", reported.Sub(unavailableAt))
		// Both stamps have one-second resolution.
		Expect(reported.Sub(unavailableAt)).To(BeNumerically("<=", 10*time.Second))

		By("bringing the nodes back")
		back := time.Now()
		Expect(env.RestoreNodes(ctx)).To(Succeed())
		Eventually(getBD(ctx, "lostnode"), 90*time.Second).Should(haveCondition("Healthy", "True", "Healthy", ""),
			func() string { return nodeAndPods(ctx) })
		GinkgoWriter.Printf("Healthy=True %s after the nodes returned\n", time.Since(back).Round(time.Second))
	})
})

// nodeAndPods says, for a failure, what the fake node's and the
// Deployment's pods' Ready conditions are and when they last changed: which
// of kube-controller-manager and kwok spoke last.
func nodeAndPods(ctx context.Context) string {
	var b strings.Builder
	node := &corev1.Node{}
	if err := env.Client.Get(ctx, objKey("", harness.FakeNodeName), node); err != nil {
		fmt.Fprintf(&b, "node %s: %v\n", harness.FakeNodeName, err)
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			fmt.Fprintf(&b, "node %s Ready=%s since %s (%s)\n", node.Name, c.Status, c.LastTransitionTime.Format(time.RFC3339), c.Reason)
		}
	}
	pods := &corev1.PodList{}
	if err := env.Client.List(ctx, pods, client.InNamespace("default")); err != nil {
		fmt.Fprintf(&b, "pods: %v\n", err)
	}
	for _, p := range pods.Items {
		if !strings.HasPrefix(p.Name, "lostnode-") {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				fmt.Fprintf(&b, "pod %s (%s, deleting %t) Ready=%s since %s (%s)\n", p.Name, p.Status.Phase, p.DeletionTimestamp != nil, c.Status, c.LastTransitionTime.Format(time.RFC3339), c.Reason)
			}
		}
	}
	return b.String()
}
