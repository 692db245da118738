package reconciler_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/bdtest"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// denyPolicy makes the API server refuse the operations on resources of
// group that match expression (CEL, false denies), until the spec ends.
func denyPolicy(ctx context.Context, name, group, resource string, ops []admissionregistrationv1.OperationType, match, message string) {
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{Operations: ops, Rule: admissionregistrationv1.Rule{
					APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{resource},
				}},
			}}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "target", Expression: match}},
			Validations:     []admissionregistrationv1.Validation{{Expression: "false", Message: message}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: name, ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	Expect(env.Client.Create(ctx, policy)).To(Succeed())
	Expect(env.Client.Create(ctx, binding)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { removePolicy(ctx, name) })
}

func removePolicy(ctx context.Context, name string) {
	_ = env.Client.Delete(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name}})
	_ = env.Client.Delete(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

var _ = Describe("errors of the adapter's own steps", func() {
	It("shows an App the API server refuses, and recovers once it is accepted", func(ctx context.Context) {
		const name = "app-refused"
		denyPolicy(ctx, name, "kappctrl.k14s.io", "apps", []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
			fmt.Sprintf("object.metadata.name == %q", name), "Apps are frozen by the test's policy")
		// The API server enforces a new policy within a second or so.
		probe := &kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: harness.SystemNamespace}}
		Eventually(func() error { return env.Client.Create(ctx, probe, client.DryRunAll) }).
			WithContext(ctx).Should(MatchError(ContainSubstring("frozen")))
		bdtest.PlainBD(ctx, name, images["plain-v0/valid"])
		Eventually(bdtest.GetBD(ctx, name)).Should(And(
			bdtest.HaveCondition("Installed", "False", "InstallFailed", "Apps are frozen by the test's policy"),
			bdtest.HaveCondition("Installed", "False", "InstallFailed", "retrying with backoff"),
		))
		removePolicy(ctx, name)
		appFor(ctx, name, 1)
		appSucceeded(ctx, name, pinned["plain-v0/valid"])
		Eventually(bdtest.GetBD(ctx, name)).WithTimeout(time.Minute).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))
	})

	It("keeps a successful install visible when superseded content cannot be removed, and says so", func(ctx context.Context) {
		const name = "prune-refused"
		ref, _, err := env.TLSRegistry.PushDir(bdtest.Testdata("rukpak-bundles", "plain-v0", "valid"), "prune-refused/bundle:v1")
		Expect(err).NotTo(HaveOccurred())
		ref2, _, err := env.TLSRegistry.PushDir(bdtest.Testdata("rukpak-bundles", "plain-v0", "provides"), "prune-refused/bundle:v2")
		Expect(err).NotTo(HaveOccurred())
		bdtest.PlainBD(ctx, name, ref, func(bd *rukpakv1alpha2.BundleDeployment) { bd.Spec.Source.Image.InsecureSkipTLSVerify = true })
		appFor(ctx, name, 1)
		appSucceeded(ctx, name, "")
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", ""))
		denyPolicy(ctx, name, "", "secrets", []admissionregistrationv1.OperationType{admissionregistrationv1.Delete},
			fmt.Sprintf("has(oldObject.metadata.labels) && %q in oldObject.metadata.labels && oldObject.metadata.labels[%q] == %q",
				rukpakv1alpha2.LabelOwnerName, rukpakv1alpha2.LabelOwnerName, name),
			"content Secrets are kept by the test's policy")
		probe := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-probe", Namespace: harness.SystemNamespace,
			Labels: map[string]string{rukpakv1alpha2.LabelOwnerName: name}}}
		Expect(env.Client.Create(ctx, probe)).To(Succeed())
		Eventually(func() error { return env.Client.Delete(ctx, probe, client.DryRunAll) }).
			WithContext(ctx).Should(MatchError(ContainSubstring("kept by the test's policy")))
		DeferCleanup(func(ctx context.Context) { _ = env.Client.Delete(ctx, probe) })

		setImage(ctx, name, ref2)
		appFor(ctx, name, 2)
		appSucceeded(ctx, name, "")
		Eventually(bdtest.GetBD(ctx, name)).Should(And(
			bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", "Instantiated bundle "+name),
			bdtest.HaveCondition("Installed", "True", "InstallationSucceeded", "content Secrets are kept by the test's policy"),
		))
		removePolicy(ctx, name)
		Eventually(bdtest.GetBD(ctx, name)).WithTimeout(time.Minute).Should(WithTransform(func(bd *rukpakv1alpha2.BundleDeployment) string {
			return apimeta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled).Message
		}, Equal("Instantiated bundle "+name)))
	})

	It("stores a long multibyte failure once, and writes nothing while it repeats", func(ctx context.Context) {
		const name = "multibyte"
		bdtest.PlainBD(ctx, name, images["plain-v0/valid"])
		appFor(ctx, name, 1)
		// 13 bytes, then three-byte characters: the cut at 512 bytes falls
		// inside one.
		stderr := "kapp: Error: " + strings.Repeat("拒否", 750)
		appDeployFailed(ctx, name, stderr, 1)
		Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Installed", "False", "InstallFailed", "拒否"))
		// Half a character would be stored as U+FFFD and never equal the
		// message computed again: a status patch on every reconcile.
		installed := apimeta.FindStatusCondition(bdtest.MustBD(ctx, name).Status.Conditions, rukpakv1alpha2.TypeInstalled)
		Expect(installed.Message).NotTo(ContainSubstring("\uFFFD"))
		// The Events API refuses a note over 1024 bytes: the Event would be lost.
		Eventually(func() ([]string, error) { return bdtest.EventNotes(ctx, name) }).Should(ContainElement(ContainSubstring("拒否")))
		written := bdtest.MustBD(ctx, name).ResourceVersion
		for i := 2; i <= 4; i++ {
			appDeployFailed(ctx, name, stderr, i)
			time.Sleep(300 * time.Millisecond)
		}
		Consistently(func() string { return bdtest.MustBD(ctx, name).ResourceVersion }).WithTimeout(2 * time.Second).Should(Equal(written))
	})

	It("never shows the credentials of a source URL in conditions or Events", func(ctx context.Context) {
		const kappFetched, adapterFetched = "url-secret-kapp", "url-secret-adapter"
		url := env.Files.URL("/private/b.tgz")
		withSecrets := strings.Replace(url, "://", "://alice:hunter2@", 1) + "?token=sesame&X-Amz-Signature=abc123"
		bdtest.HTTPBD(ctx, kappFetched, withSecrets, "")
		appFor(ctx, kappFetched, 1)
		appFetchFailed(ctx, kappFetched, fmt.Sprintf("vendir: Error: Syncing directory '0': Get %q: 404 Not Found", withSecrets))

		unreachable := "https://alice:hunter2@127.0.0.1:1/b.tgz?token=sesame"
		bdtest.PlainBD(ctx, adapterFetched, "", func(bd *rukpakv1alpha2.BundleDeployment) {
			h := &rukpakv1alpha2.HTTPSource{URL: unreachable}
			h.Auth.InsecureSkipVerify = true
			bd.Spec.Source = rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeHTTP, HTTP: h}
		})
		for _, name := range []string{kappFetched, adapterFetched} {
			Eventually(bdtest.GetBD(ctx, name)).Should(bdtest.HaveCondition("Unpacked", "False", "UnpackFailed", "***"))
			var texts []string
			for _, c := range bdtest.MustBD(ctx, name).Status.Conditions {
				texts = append(texts, c.Message)
			}
			// The recorder writes Events after the status: wait for them.
			var notes []string
			Eventually(func(g Gomega) {
				var err error
				notes, err = bdtest.EventNotes(ctx, name)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(notes).NotTo(BeEmpty())
			}).Should(Succeed())
			texts = append(texts, notes...)
			for _, t := range texts {
				for _, secret := range []string{"hunter2", "alice", "sesame", "abc123"} {
					Expect(t).NotTo(ContainSubstring(secret), "%s leaks %q", name, secret)
				}
			}
		}
	})
})
