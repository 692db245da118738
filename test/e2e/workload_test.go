package e2e_test

import (
	"context"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ = Describe("workloads on fake nodes", func() {
	It("installs a Deployment once it is Available", func(ctx context.Context) {
		ref, _, err := env.Registry.PushDir(filepath.Join("testdata", "workload"), "bundles/workload:v1")
		Expect(err).NotTo(HaveOccurred())
		plainBD(ctx, "workload", ref)
		Eventually(getBD(ctx, "workload")).Should(And(
			haveCondition("Installed", "True", "InstallationSucceeded", ""),
			haveCondition("Healthy", "True", "Healthy", ""),
		))
		dep := &appsv1.Deployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "workload"}, dep)).To(Succeed())
		Expect(dep.Status.AvailableReplicas).To(BeEquivalentTo(2))
		Expect(dep.Status.Conditions).To(ContainElement(And(
			HaveField("Type", appsv1.DeploymentAvailable), HaveField("Status", corev1.ConditionTrue),
		)))
	})
})
