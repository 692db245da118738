package takeover_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/takeover"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
	"github.com/rukpak-kapp/rukpak-kapp/test/harness"
)

// image is a BundleDeployment source of an image.
func image(ref string) rukpakv1alpha2.BundleSource {
	return rukpakv1alpha2.BundleSource{Type: rukpakv1alpha2.SourceTypeImage, Image: &rukpakv1alpha2.ImageSource{Ref: ref}}
}

// newBD creates a BundleDeployment installing into its own namespace.
func newBD(ctx context.Context, name, class string, src rukpakv1alpha2.BundleSource, config string) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	ExpectWithOffset(1, client.IgnoreAlreadyExists(env.Client.Create(ctx, ns))).To(Succeed())
	bd := &rukpakv1alpha2.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: rukpakv1alpha2.BundleDeploymentSpec{
			InstallNamespace: name, ProvisionerClassName: class, Source: src,
		},
	}
	if config != "" {
		bd.Spec.Config = &apiextensionsv1.JSON{Raw: []byte(config)}
	}
	ExpectWithOffset(1, env.Client.Create(ctx, bd)).To(Succeed())
}

func getBD(ctx context.Context, name string) func() (*rukpakv1alpha2.BundleDeployment, error) {
	return func() (*rukpakv1alpha2.BundleDeployment, error) {
		bd := &rukpakv1alpha2.BundleDeployment{}
		return bd, env.Client.Get(ctx, client.ObjectKey{Name: name}, bd)
	}
}

func mustBD(ctx context.Context, name string) *rukpakv1alpha2.BundleDeployment {
	bd, err := getBD(ctx, name)()
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return bd
}

// installedByRukpak matches what rukpak v0.24.0 writes once it installed
// the current generation: it sets status.observedGeneration, not the
// condition's.
func installedByRukpak() types.GomegaMatcher {
	return WithTransform(func(bd *rukpakv1alpha2.BundleDeployment) string {
		c := meta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled)
		if c == nil {
			return "no Installed condition"
		}
		return fmt.Sprintf("%s/%s/status-gen-current=%v: %s", c.Status, c.Reason, bd.Status.ObservedGeneration == bd.Generation, c.Message)
	}, HavePrefix("True/InstallationSucceeded/status-gen-current=true"))
}

// installedByAdapter matches rukpak-kapp's Installed=True for the current
// generation: unlike rukpak, it stamps the condition's observedGeneration.
func installedByAdapter() types.GomegaMatcher {
	return WithTransform(func(bd *rukpakv1alpha2.BundleDeployment) string {
		c := meta.FindStatusCondition(bd.Status.Conditions, rukpakv1alpha2.TypeInstalled)
		if c == nil {
			return "no Installed condition"
		}
		return fmt.Sprintf("%s/%s/gen-current=%v: %s", c.Status, c.Reason, c.ObservedGeneration == bd.Generation, c.Message)
	}, HavePrefix("True/InstallationSucceeded/gen-current=true"))
}

// installedThroughApp checks that rukpak-kapp installed bd's current
// generation through its App: the condition alone can be carried forward
// from rukpak's status before kapp-controller deployed anything.
func installedThroughApp(ctx context.Context, name string) func(Gomega) {
	return func(g Gomega) {
		bd, err := getBD(ctx, name)()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(bd).To(installedByAdapter())
		app := &kappctrlv1alpha1.App{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: harness.SystemNamespace, Name: name}, app)).To(Succeed())
		g.Expect(app.Status.ObservedGeneration).To(Equal(app.Generation))
		g.Expect(app.Status.Conditions).To(ContainElement(HaveField("Type", kappctrlv1alpha1.ReconcileSucceeded)), app.Status.UsefulErrorMessage)
	}
}

// state is what must not change when rukpak-kapp takes over.
type state struct {
	UID               string
	CreationTimestamp string
	// ReplicaSets of a Deployment: name/uid, sorted.
	ReplicaSets []string
}

// installedObjects lists the objects of bd's current rukpak release (and
// its chart's crds/), as the take-over sees them.
func installedObjects(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) []*unstructured.Unstructured {
	secrets := &corev1.SecretList{}
	ExpectWithOffset(1, env.Client.List(ctx, secrets, client.InNamespace(harness.SystemNamespace))).To(Succeed())
	rel, err := takeover.CurrentRelease(takeover.ReleaseSecrets(bd, secrets.Items))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	objs, err := takeover.ParseManifest([]byte(rel.Manifest))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	crds, err := takeover.ReleaseCRDs(rel)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	placed, err := takeover.Place(append(objs, crds...), bd.Spec.InstallNamespace, func(gk schema.GroupKind) (bool, bool) {
		m, err := env.Client.RESTMapper().RESTMapping(gk)
		if err != nil {
			return false, false
		}
		return m.Scope.Name() == meta.RESTScopeNameNamespace, true
	})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return placed
}

// snapshot reads the state of each object.
func snapshot(ctx context.Context, objs []*unstructured.Unstructured) map[takeover.Ref]state {
	out := map[takeover.Ref]state{}
	for _, o := range objs {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(o.GroupVersionKind())
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(o), live)
		if apierrors.IsNotFound(err) {
			continue
		}
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		s := state{UID: string(live.GetUID()), CreationTimestamp: live.GetCreationTimestamp().String()}
		if o.GetKind() == "Deployment" {
			s.ReplicaSets = replicaSetsOf(ctx, live)
		}
		out[takeover.RefOf(o)] = s
	}
	return out
}

func replicaSetsOf(ctx context.Context, dep *unstructured.Unstructured) []string {
	list := &appsv1.ReplicaSetList{}
	ExpectWithOffset(2, env.Client.List(ctx, list, client.InNamespace(dep.GetNamespace()))).To(Succeed())
	var out []string
	for _, rs := range list.Items {
		for _, ref := range rs.OwnerReferences {
			if ref.UID == dep.GetUID() {
				out = append(out, rs.Name+"/"+string(rs.UID))
			}
		}
	}
	sort.Strings(out)
	return out
}

// live reads one object as the cluster has it now.
func live(ctx context.Context, ref takeover.Ref) (*unstructured.Unstructured, error) {
	m, err := env.Client.RESTMapper().RESTMapping(ref.GroupKind())
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(m.GroupVersionKind)
	return u, env.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, u)
}

type report struct {
	BundleDeployment string         `json:"bundleDeployment"`
	Skipped          string         `json:"skipped"`
	Plan             *takeover.Plan `json:"plan"`
}

// migratePlan runs `rukpak-kapp migrate plan -o json` against the harness.
func migratePlan(ctx context.Context, args ...string) (map[string]report, int) {
	cmd := exec.CommandContext(ctx, cli, append([]string{"migrate", "plan", "-o", "json"}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.ControlPlane.Kubeconfig)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else {
		ExpectWithOffset(1, err).NotTo(HaveOccurred(), stderr.String())
	}
	var reports []report
	ExpectWithOffset(1, json.Unmarshal(out, &reports)).To(Succeed(), "stdout: %s\nstderr: %s", out, stderr.String())
	byName := map[string]report{}
	for _, r := range reports {
		byName[r.BundleDeployment] = r
	}
	GinkgoWriter.Printf("migrate plan (exit %d):\n%s\nstderr: %s\n", code, out, stderr.String())
	return byName, code
}

// planCameTrue checks that each object carries what the plan said the
// take-over would leave on it.
func planCameTrue(ctx context.Context, p *takeover.Plan) {
	for _, o := range p.Objects {
		u, err := live(ctx, o.Ref)
		ExpectWithOffset(1, err).NotTo(HaveOccurred(), "%s", o.Ref)
		checkMap(o.Ref, "label", u.GetLabels(), o.Labels)
		checkMap(o.Ref, "annotation", u.GetAnnotations(), o.Annotations)
		refs := map[string]string{}
		for _, r := range u.GetOwnerReferences() {
			refs[r.Kind+"."+r.APIVersion+"/"+r.Name] = string(r.UID)
		}
		for k := range o.OwnerReferences.Removed {
			ExpectWithOffset(1, refs).NotTo(HaveKey(k), "%s: the plan said owner reference %s goes", o.Ref, k)
		}
	}
}

func checkMap(ref takeover.Ref, what string, have map[string]string, c takeover.MapChange) {
	for k := range c.Removed {
		ExpectWithOffset(2, have).NotTo(HaveKey(k), "%s: the plan said %s %s goes", ref, what, k)
	}
	for k, v := range mergedChanges(c) {
		ExpectWithOffset(2, have).To(HaveKey(k), "%s: the plan said %s %s comes", ref, what, k)
		if v != takeover.KappValue {
			ExpectWithOffset(2, have[k]).To(Equal(v), "%s: %s %s", ref, what, k)
		}
	}
}

func mergedChanges(c takeover.MapChange) map[string]string {
	out := map[string]string{}
	for k, v := range c.Added {
		out[k] = v
	}
	for k, v := range c.Changed {
		out[k] = v
	}
	return out
}

func setClass(ctx context.Context, name, class string) {
	bd := mustBD(ctx, name)
	before := bd.DeepCopy()
	bd.Spec.ProvisionerClassName = class
	ExpectWithOffset(1, env.Client.Patch(ctx, bd, client.MergeFrom(before))).To(Succeed())
}

func deleteAndWait(ctx context.Context, name string) {
	bd := &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: name}}
	ExpectWithOffset(1, client.IgnoreNotFound(env.Client.Delete(ctx, bd))).To(Succeed())
	EventuallyWithOffset(1, func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(bd), bd))
	}).WithContext(ctx).Should(BeTrue(), "BundleDeployment %s was not deleted", name)
}

func releaseSecrets(ctx context.Context, bd *rukpakv1alpha2.BundleDeployment) []string {
	secrets := &corev1.SecretList{}
	ExpectWithOffset(1, env.Client.List(ctx, secrets, client.InNamespace(harness.SystemNamespace))).To(Succeed())
	var out []string
	for _, s := range takeover.ReleaseSecrets(bd, secrets.Items) {
		out = append(out, s.Name)
	}
	return out
}
