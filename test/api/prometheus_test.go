package api_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// decoded is the one object of kind in manifests.
func decoded(manifests []*unstructured.Unstructured, kind string, into any) {
	GinkgoHelper()
	for _, u := range manifests {
		if u.GetKind() == kind {
			Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)).To(Succeed())
			return
		}
	}
	Fail("no " + kind)
}

var _ = Describe("the optional metrics manifests in config/prometheus", func() {
	It("select the adapter's pods and its metrics port, and the ServiceMonitor that Service", func(ctx context.Context) {
		installed, err := env.Kustomize(ctx, "config/default")
		Expect(err).NotTo(HaveOccurred())
		objs, err := harness.DecodeYAML(installed)
		Expect(err).NotTo(HaveOccurred())
		deployment := &appsv1.Deployment{}
		decoded(objs, "Deployment", deployment)

		manifests, err := env.Kustomize(ctx, "config/prometheus")
		Expect(err).NotTo(HaveOccurred())
		prom, err := harness.DecodeYAML(manifests)
		Expect(err).NotTo(HaveOccurred())
		svc := &corev1.Service{}
		decoded(prom, "Service", svc)
		Expect(svc.Namespace).To(Equal(deployment.Namespace))
		Expect(labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(deployment.Spec.Template.Labels))).To(BeTrue(), "the Service selects the adapter's pods")
		Expect(svc.Spec.Ports).To(HaveLen(1))
		var metricsPort *corev1.ContainerPort
		for _, p := range deployment.Spec.Template.Spec.Containers[0].Ports {
			if p.Name == svc.Spec.Ports[0].TargetPort.StrVal {
				metricsPort = &p
			}
		}
		Expect(metricsPort).NotTo(BeNil(), "the Service's targetPort names a port of the adapter's container")
		Expect(deployment.Spec.Template.Spec.Containers[0].Args).To(ContainElement(ContainSubstring("--metrics-bind-address=:")))
		for _, u := range prom {
			if u.GetKind() == "Service" {
				Expect(env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("config-test"), client.ForceOwnership, client.DryRunAll)).
					To(Succeed(), "the Service applies")
			}
		}

		var monitor *unstructured.Unstructured
		for _, u := range prom {
			if u.GetKind() == "ServiceMonitor" {
				monitor = u
			}
		}
		Expect(monitor).NotTo(BeNil())
		Expect(monitor.GetNamespace()).To(Equal(svc.Namespace))
		selector, _, _ := unstructured.NestedStringMap(monitor.Object, "spec", "selector", "matchLabels")
		Expect(labels.SelectorFromSet(selector).Matches(labels.Set(svc.Labels))).To(BeTrue(), "the ServiceMonitor selects the metrics Service")
		endpoints, _, _ := unstructured.NestedSlice(monitor.Object, "spec", "endpoints")
		Expect(endpoints).To(ContainElement(HaveKeyWithValue("port", svc.Spec.Ports[0].Name)))
	})
})
