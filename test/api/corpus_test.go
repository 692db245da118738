package api_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// stubCRD serves a kind that bundles ship but a bare API server lacks
// (OpenShift console kinds, the VPA), accepting any content.
func stubCRD(group, kind, plural string, namespaced bool) *apiextensionsv1.CustomResourceDefinition {
	scope := apiextensionsv1.ClusterScoped
	if namespaced {
		scope = apiextensionsv1.NamespaceScoped
	}
	yes := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{
			Name: plural + "." + group,
			// The VPA's group is a protected *.k8s.io group.
			Annotations: map[string]string{"api-approved.kubernetes.io": "unapproved, test stub"},
		},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group, Scope: scope,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, Plural: plural},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &yes,
				}},
			}},
		},
	}
}

// applyCRDs creates CRDs for real and waits until they are served.
func applyCRDs(ctx context.Context, crds []*unstructured.Unstructured) {
	for _, crd := range crds {
		Expect(env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(crd), client.FieldOwner("corpus-test"), client.ForceOwnership)).
			To(Succeed(), "CRD %s", crd.GetName())
	}
	for _, crd := range crds {
		Eventually(func(g Gomega) {
			live := &apiextensionsv1.CustomResourceDefinition{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: crd.GetName()}, live)).To(Succeed())
			established := false
			for _, c := range live.Status.Conditions {
				established = established || (c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue)
			}
			g.Expect(established).To(BeTrue(), "conditions: %+v", live.Status.Conditions)
		}).WithContext(ctx).WithTimeout(30*time.Second).Should(Succeed(), "CRD %s established", crd.GetName())
	}
}

var _ = Describe("registry+v1 corpus", Ordered, func() {
	root := func() string { return filepath.Join(env.Root, "test", "testdata") }

	BeforeAll(func(ctx context.Context) {
		// Third-party kinds the corpus ships, served by permissive stubs:
		// bundles are written against many versions of these APIs.
		var crds []*unstructured.Unstructured
		var err error
		for _, s := range []*apiextensionsv1.CustomResourceDefinition{
			stubCRD("monitoring.coreos.com", "ServiceMonitor", "servicemonitors", true),
			stubCRD("monitoring.coreos.com", "PodMonitor", "podmonitors", true),
			stubCRD("monitoring.coreos.com", "PrometheusRule", "prometheusrules", true),
			stubCRD("console.openshift.io", "ConsoleYAMLSample", "consoleyamlsamples", false),
			stubCRD("console.openshift.io", "ConsoleQuickStart", "consolequickstarts", false),
			stubCRD("console.openshift.io", "ConsoleCLIDownload", "consoleclidownloads", false),
			stubCRD("console.openshift.io", "ConsoleLink", "consolelinks", false),
			stubCRD("console.openshift.io", "ConsolePlugin", "consoleplugins", false),
			stubCRD("autoscaling.k8s.io", "VerticalPodAutoscaler", "verticalpodautoscalers", true),
		} {
			s.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
			u := &unstructured.Unstructured{}
			u.Object, err = toMap(s)
			Expect(err).NotTo(HaveOccurred())
			crds = append(crds, u)
		}
		applyCRDs(ctx, crds)
	})

	// Each bundle converts and passes a server-side dry-run apply, or is
	// refused with its problems. 57 of 61 convert:
	//   - awss3-operator-registry 1.0.1, dbaas-operator 0.5.0,
	//     kuadrant-operator 0.11.1, mercury-operator 1.0.2,
	//     rabbitmq-messaging-topology-operator 1.19.3, shipwright-operator
	//     0.15.2: their dependencies are data for the caller to check, no
	//     longer a refusal (rukpak v0.24.0 installed them too).
	//   - cluster-aas-operator 0.1.5: the same, and its two ClusterRoles
	//     without apiVersion get the one OLM creates them with.
	//   - ack-secretsmanager-controller 1.4.1, ecr-secret-operator 0.6.0:
	//     the samples of their own API (kinds named Secret) are left out, as
	//     OLM never creates them.
	//   - external-secrets-operator 0.11.0: three CRDs
	//     with two versions name a conversion webhook that the CSV does not
	//     declare and only its operand serves, once the operator deploys it;
	//     they are installed with the stanza as shipped and a note (OLM and
	//     rukpak v0.24.0 install the bundle too).
	// Still refused, each for what cannot work as shipped:
	//   - cockroachdb 2.1.1, hyperfoil-bundle 0.5.1: apiextensions.k8s.io/
	//     v1beta1 CRDs, which Kubernetes has not served since 1.22.
	//   - percona-server-mongodb-operator 1.18.0: its one real install mode,
	//     SingleNamespace, needs spec.config.watchNamespaces (with it, it
	//     converts: the next spec).
	//   - stolostron 0.1.4: a CRD with two versions names a conversion
	//     webhook the CSV does not declare and nothing in the bundle serves,
	//     with a placeholder caBundle: the API server would not serve it.
	It("converts each bundle or lists its problems, and every converted bundle passes a server-side dry-run apply", func(ctx context.Context) {
		dirs, err := filepath.Glob(filepath.Join(root(), "registry-v1-corpus", "*", "*"))
		Expect(err).NotTo(HaveOccurred())
		var bundles []string
		for _, d := range dirs {
			if info, err := os.Stat(d); err == nil && info.IsDir() {
				bundles = append(bundles, d)
			}
		}
		Expect(bundles).To(HaveLen(61))
		var converted, refused []string
		for i, dir := range bundles {
			name := filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir)
			if ok, problems := convertAndDryRun(ctx, dir, fmt.Sprintf("corpus-%02d", i), nil); !ok {
				refused = append(refused, name+": "+strings.Join(problems, "; "))
				continue
			}
			converted = append(converted, name)
		}
		sort.Strings(refused)
		GinkgoWriter.Printf("converted %d of %d corpus bundles; refused:\n  %s\n", len(converted), len(bundles), strings.Join(refused, "\n  "))
		AddReportEntry("corpus conversion rate", fmt.Sprintf("%d/%d", len(converted), len(bundles)))
		// A change of verdict must be explained above.
		var refusedNames []string
		for _, r := range refused {
			refusedNames = append(refusedNames, strings.SplitN(r, ":", 2)[0])
		}
		Expect(refusedNames).To(Equal([]string{
			"cockroachdb/2.1.1", "hyperfoil-bundle/0.5.1", "percona-server-mongodb-operator/1.18.0", "stolostron/0.1.4",
		}))
	})

	It("converts percona-server-mongodb-operator 1.18.0 when told the namespace to watch", func(ctx context.Context) {
		Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "corpus-percona-watched"}})).To(Succeed())
		ok, problems := convertAndDryRun(ctx, filepath.Join(root(), "registry-v1-corpus", "percona-server-mongodb-operator", "1.18.0"), "corpus-percona", []string{"corpus-percona-watched"})
		Expect(ok).To(BeTrue(), "problems: %v", problems)
	})
})

// convertAndDryRun converts a bundle for namespace ns (created here) and
// applies it: its CRDs for real, the rest as a server-side dry run. A
// refusal returns its problems.
func convertAndDryRun(ctx context.Context, dir, ns string, watch []string) (bool, []string) {
	files, err := convert.ReadDir(os.DirFS(dir))
	Expect(err).NotTo(HaveOccurred())
	r, err := convert.Convert(files, convert.Options{InstallNamespace: ns, WatchNamespaces: watch})
	if err != nil {
		var cerr *convert.Error
		Expect(errors.As(err, &cerr)).To(BeTrue(), "%s: not a list of problems: %v", dir, err)
		Expect(cerr.Problems).NotTo(BeEmpty())
		return false, cerr.Problems
	}
	for _, n := range r.Notes {
		GinkgoWriter.Printf("%s: note: %s\n", filepath.Base(filepath.Dir(dir)), n)
	}
	Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	var crds, rest []*unstructured.Unstructured
	for _, o := range r.Objects {
		if o.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, o)
		} else {
			rest = append(rest, o)
		}
	}
	applyCRDs(ctx, crds)
	for _, o := range rest {
		err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("corpus-test"), client.ForceOwnership, client.DryRunAll)
		Expect(err).NotTo(HaveOccurred(), "%s: %s %s/%s", dir, o.GetKind(), o.GetNamespace(), o.GetName())
	}
	return true, nil
}

func toMap(obj any) (map[string]any, error) {
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}
