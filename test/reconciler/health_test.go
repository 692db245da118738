package reconciler_test

import (
	"context"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// appSucceededWith: the run deployed everything, objects of kinds among
// them, as kapp-controller reports them (status.deploy.kapp).
func appSucceededWith(ctx context.Context, name, digestRef string, kinds ...metav1.GroupKind) {
	setAppStatus(ctx, name, func(st *kappctrlv1alpha1.AppStatus) {
		st.Conditions = appCondition(kappctrlv1alpha1.ReconcileSucceeded)
		st.Fetch = fetchOK(digestRef)
		st.Template = &kappctrlv1alpha1.AppStatusTemplate{UpdatedAt: metav1.Now()}
		st.Deploy = &kappctrlv1alpha1.AppStatusDeploy{UpdatedAt: metav1.Now(), Finished: true,
			KappDeployStatus: &kappctrlv1alpha1.KappDeployStatus{AssociatedResources: kappctrlv1alpha1.AssociatedResources{
				Namespaces: []string{"default"}, GroupKinds: kinds}}}
		st.ConsecutiveReconcileSuccesses = 1
	})
}

var _ = Describe("the health of installed custom resources", func() {
	It("says what to grant for a kind the adapter may not read, judges it once granted, and by CEL expressions where it reports only a phase", func(ctx context.Context) {
		const name, group = "health-unread", "unread.health.example.com"
		crd := bdtest.CRD(bdtest.CRDYAML(group, "Gadget", "gadgets", bdtest.GizmoV1(), nil))
		crd.Spec.Versions[0].Schema.OpenAPIV3Schema.XPreserveUnknownFields = ptrTo(true)
		Expect(env.Client.Create(ctx, crd)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, crd) })
		bdtest.PlainBD(ctx, name, images["plain-v0/valid"])
		appFor(ctx, name, 1)
		gadget := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1", "kind": "Gadget",
			"metadata": map[string]any{"namespace": "default", "name": "g1", "labels": map[string]any{
				rukpakv1alpha2.LabelOwnerKind: rukpakv1alpha2.OwnerKind, rukpakv1alpha2.LabelOwnerName: name}},
			"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "Up", "message": "Up."}}},
		}}
		Eventually(func() error { return env.Client.Create(ctx, gadget) }).WithContext(ctx).Should(Succeed())
		appSucceededWith(ctx, name, pinned["plain-v0/valid"], metav1.GroupKind{Group: group, Kind: "Gadget"}, metav1.GroupKind{Kind: "ConfigMap"})

		By("the adapter may not list Gadgets: Unknown, naming the grant")
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Healthy", "Unknown", "HealthUnknown",
			"every Gadget."+group+" is Unknown: the adapter may not list them: "+
				"grant it list and watch on gadgets."+group+" in a ClusterRole labelled rukpak-kapp.dev/aggregate-to-health=true"))

		By("granting it: the informer's next list, within its backoff (at most 30 s), wakes the BundleDeployment")
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "health-unread-gadgets"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{group}, Resources: []string{"gadgets"}, Verbs: []string{"list", "watch"}}}}
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "health-unread-gadgets"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: harness.SystemNamespace, Name: harness.AdapterServiceAccount}}}
		Expect(env.Client.Create(ctx, role)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, role) })
		Expect(env.Client.Create(ctx, binding)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, binding) })
		Eventually(bdtest.GetBD(ctx, name)).WithTimeout(40 * time.Second).Should(bdtest.HaveCondition("Healthy", "True", "Healthy", ""))

		By("its Ready turns False: Unhealthy, naming it")
		setGadgetStatus(ctx, gadget, map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "Down", "message": "The gadget is down."}}})
		Eventually(bdtest.GetBD(ctx, name)).WithTimeout(5 * time.Second).Should(bdtest.HaveCondition("Healthy", "False", "Unhealthy",
			"Gadget default/g1 is InProgress: The gadget is down"))

		By("a kind that reports only a phase, judged by the BundleDeployment's CEL expressions")
		setGadgetStatus(ctx, gadget, map[string]any{"phase": "Failed"})
		bd := bdtest.MustBD(ctx, name)
		before := client.MergeFrom(bd.DeepCopy())
		if bd.Annotations == nil {
			bd.Annotations = map[string]string{}
		}
		bd.Annotations[rukpakv1alpha2.AnnotationHealthExpressions] = "- apiVersion: " + group + "/v1\n  kind: Gadget\n" +
			"  current: status.phase == 'Running'\n  failed: status.phase == 'Failed'\n"
		Expect(env.Client.Patch(ctx, bd, before)).To(Succeed())
		Eventually(bdtest.GetBD(ctx, name)).WithTimeout(5 * time.Second).Should(bdtest.HaveCondition("Healthy", "False", rukpakv1alpha2.ReasonObjectFailed,
			"Gadget default/g1 is Failed: status.phase == 'Failed' ("+rukpakv1alpha2.AnnotationHealthExpressions+")"))
		setGadgetStatus(ctx, gadget, map[string]any{"phase": "Running"})
		Eventually(bdtest.GetBD(ctx, name)).WithTimeout(5 * time.Second).Should(bdtest.HaveCondition("Healthy", "True", "Healthy", ""))
	})
})

// setGadgetStatus writes the Gadget's status as its controller would (its
// CRD has no status subresource).
func setGadgetStatus(ctx context.Context, gadget *unstructured.Unstructured, st map[string]any) {
	GinkgoHelper()
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(gadget.GroupVersionKind())
	live.SetNamespace(gadget.GetNamespace())
	live.SetName(gadget.GetName())
	Expect(harness.Edit(ctx, env.Client, live, func(live *unstructured.Unstructured) { live.Object["status"] = st })).To(Succeed())
}
