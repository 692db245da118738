package client

import (
	"context"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rukpak-kapp/rukpak-kapp/adapter"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/controllers/kappconfig"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/fetch"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// What config/ installs, as check looks for it.
const (
	adapterName       = "rukpak-kapp"
	leaderLease       = "rukpak-kapp.core.rukpak.io"
	webhookConfig     = "rukpak-kapp"
	admissionPolicy   = "rukpak-kapp-uninstall-finalizer"
	packagingService  = adapter.PackagingAPIService
	kappInstallCmd    = "install kapp-controller v0.53.1 or newer (kubectl apply -f https://github.com/carvel-dev/kapp-controller/releases/download/v0.53.1/release.yml)"
	applyReleaseFix   = "apply this release's manifest (kubectl apply --server-side -f rukpak-kapp.yaml)"
	checkCallTimeout  = 10 * time.Second
	bundleDeploymentF = "bundledeployments.core.rukpak.io"
)

// checker holds the clients of one run.
type checker struct {
	c    client.Client
	disc discovery.DiscoveryInterface
	ns   string
	now  time.Time
}

// checkQPS and checkBurst bound check's requests: client-go's default (5
// a second) would make the adapter RBAC line's hundred-odd
// SubjectAccessReviews take half a minute.
const (
	checkQPS   = 50
	checkBurst = 100
	// reviewsAtOnce is how many SubjectAccessReviews check asks at once.
	reviewsAtOnce = 8
)

// Check makes every check of `rukpak-kapp check` against the cluster of
// cfg, whose system namespace is ns, writing nothing (its webhook probe is
// a dry run): a result per line, in the order they print.
func Check(ctx context.Context, cfg *rest.Config, ns string) ([]CheckResult, error) {
	scheme, err := adapter.Scheme()
	if err != nil {
		return nil, err
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = checkCallTimeout
	cfg.QPS, cfg.Burst = checkQPS, checkBurst
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("connect to the cluster: %w", err)
	}
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to the cluster: %w", err)
	}
	if _, err := d.ServerVersion(); err != nil {
		return nil, fmt.Errorf("reach the cluster's API server: %w", err)
	}
	return checker{c: c, disc: d, ns: ns, now: time.Now()}.run(ctx), nil
}

// run makes every check, in the order they print.
func (k checker) run(ctx context.Context) []CheckResult {
	var out []CheckResult
	kapp, kappDep := k.kappController(ctx)
	out = append(out, kapp, k.packagingAPI(ctx))
	out = append(out, k.crds(ctx)...)
	deployment, adapterDep, deployed := k.adapterDeployment(ctx)
	out = append(out, deployment, k.leader(ctx, deployed))
	out = append(out, k.webhooks(ctx)...)
	out = append(out, k.admission(ctx), k.rbac(ctx), k.namespaceRBAC(ctx, adapterDep), k.kappConfig(ctx, kappDep, adapterDep), evalGlobalNamespace(kappDep, adapterDep), k.rukpak(ctx), k.bundleDeployments(ctx))
	return out
}

// readFix is the fix of a read check could not make: when it was refused,
// the right that would let check make it.
func readFix(err error, right string) string {
	if apierrors.IsForbidden(err) {
		return "run check as someone who may " + right
	}
	return "check the kubeconfig's rights"
}

// kappController also returns kapp-controller's Deployment, nil when none
// is found.
func (k checker) kappController(ctx context.Context) (CheckResult, *appsv1.Deployment) {
	const name = "kapp-controller API"
	res, err := k.disc.ServerResourcesForGroupVersion("kappctrl.k14s.io/v1alpha1")
	served := err == nil
	if served {
		served = false
		for _, r := range res.APIResources {
			served = served || r.Name == "apps"
		}
	}
	if !served {
		return fail(name, "kapp-controller's API (kappctrl.k14s.io/v1alpha1 Apps) is not served: no BundleDeployment can be installed", kappInstallCmd), nil
	}
	var deps appsv1.DeploymentList
	if err := k.c.List(ctx, &deps, client.MatchingFields{"metadata.name": "kapp-controller"}); err == nil {
		for i, d := range deps.Items {
			for _, ctr := range d.Spec.Template.Spec.Containers {
				if ctr.Name == "kapp-controller" {
					return ok(name, fmt.Sprintf("served; Deployment %s/%s runs %s", d.Namespace, d.Name, ctr.Image)), &deps.Items[i]
				}
			}
		}
	}
	return ok(name, "served (no kapp-controller Deployment found to read its version from)"), nil
}

func (k checker) packagingAPI(ctx context.Context) CheckResult {
	const name = "packaging API"
	svc := &unstructured.Unstructured{}
	svc.SetAPIVersion("apiregistration.k8s.io/v1")
	svc.SetKind("APIService")
	err := k.c.Get(ctx, client.ObjectKey{Name: packagingService}, svc)
	switch {
	case apierrors.IsNotFound(err):
		return warn(name, "kapp-controller's packaging API ("+packagingService+") is not installed: App mode needs none, the serve mode (--install-with=packageinstall) and catalogs do",
			"install kapp-controller's release, which serves it")
	case err != nil:
		return fail(name, "the APIService "+packagingService+" could not be read: "+err.Error(), readFix(err, "get apiservices.apiregistration.k8s.io"))
	}
	conds, _, _ := unstructured.NestedSlice(svc.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Available" {
			if m["status"] == "True" {
				return ok(name, packagingService+" is available")
			}
			return fail(name, fmt.Sprintf("%s is not available (%v: %v): PackageInstalls and Packages fail, and OperatorCatalogs wait for it (PackagingAPIUnavailable)", packagingService, m["reason"], m["message"]),
				"kapp-controller serves it: check kapp-controller's pod, and its Service and endpoints in kapp-controller's namespace")
		}
	}
	return fail(name, packagingService+" reports no availability yet", "wait a minute and check again; else check kapp-controller's pod")
}

func (k checker) crds(ctx context.Context) []CheckResult {
	var out []CheckResult
	crd := &apiextensionsv1.CustomResourceDefinition{}
	err := k.c.Get(ctx, client.ObjectKey{Name: bundleDeploymentF}, crd)
	switch {
	case apierrors.IsNotFound(err):
		out = append(out, fail("CRDs", "the BundleDeployment CRD is not installed", applyReleaseFix))
	case err != nil:
		out = append(out, fail("CRDs", "the BundleDeployment CRD could not be read: "+err.Error(), readFix(err, "get customresourcedefinitions.apiextensions.k8s.io")))
	default:
		served := map[string]bool{}
		storage := ""
		for _, v := range crd.Spec.Versions {
			served[v.Name] = v.Served
			if v.Storage {
				storage = v.Name
			}
		}
		if !served["v1alpha2"] || !served["v1alpha1"] || storage != "v1alpha2" {
			out = append(out, fail("CRDs", fmt.Sprintf("the BundleDeployment CRD is not this release's: it serves %v and stores %s (this release serves v1alpha1 and v1alpha2, stores v1alpha2); it is rukpak's", served, storage),
				"take rukpak over as docs/migrating-from-rukpak.md says, or "+applyReleaseFix))
		} else {
			out = append(out, ok("CRDs", "BundleDeployment serves v1alpha1 and v1alpha2, stores v1alpha2"))
		}
	}
	for _, c := range []struct{ name, kind, without string }{
		{"operatorcatalogs.catalogs.rukpak-kapp.dev", "OperatorCatalog", "catalog images are not followed"},
		{"operatorinstalls.catalogs.rukpak-kapp.dev", "OperatorInstall", "catalog Packages install nothing (their template makes an OperatorInstall)"},
	} {
		if err := k.c.Get(ctx, client.ObjectKey{Name: c.name}, &apiextensionsv1.CustomResourceDefinition{}); apierrors.IsNotFound(err) {
			out = append(out, warn("catalog API", fmt.Sprintf("the %s CRD (config/catalogs) is not installed: %s", c.kind, c.without), applyReleaseFix))
		}
	}
	return out
}

// adapterDeployment also returns the Deployment (nil when it could not be
// read) and says whether the adapter runs as one.
func (k checker) adapterDeployment(ctx context.Context) (CheckResult, *appsv1.Deployment, bool) {
	const name = "adapter"
	d := &appsv1.Deployment{}
	err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: adapterName}, d)
	switch {
	case apierrors.IsNotFound(err):
		return warn(name, "no Deployment "+k.ns+"/"+adapterName+" (the adapter may run elsewhere, as `make run` runs it: the leader lease says whether one runs)", applyReleaseFix), nil, false
	case err != nil:
		return fail(name, "the adapter's Deployment could not be read: "+err.Error(), readFix(err, "get deployments.apps in "+k.ns)), nil, true
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable {
			if c.Status == "True" {
				return ok(name, fmt.Sprintf("Deployment %s/%s available (%d of %d replicas ready)", k.ns, adapterName, d.Status.ReadyReplicas, d.Status.Replicas)), d, true
			}
			return fail(name, fmt.Sprintf("Deployment %s/%s is not available: %s", k.ns, adapterName, c.Message), "kubectl -n "+k.ns+" describe deployment "+adapterName+", and the pods' logs"), d, true
		}
	}
	return fail(name, "Deployment "+k.ns+"/"+adapterName+" reports no availability yet", "kubectl -n "+k.ns+" describe deployment "+adapterName), d, true
}

// leader: deployed says whether the adapter runs as a Deployment, whose
// replicas elect a leader.
func (k checker) leader(ctx context.Context, deployed bool) CheckResult {
	lease := &coordinationv1.Lease{}
	err := k.c.Get(ctx, client.ObjectKey{Namespace: k.ns, Name: leaderLease}, lease)
	if apierrors.IsNotFound(err) {
		// An adapter run without --leader-elect (one process, as `make run`
		// runs it) takes no lease; a Deployment's replicas do.
		if !deployed {
			return warn("adapter leader", "no leader lease "+k.ns+"/"+leaderLease+": an adapter run without --leader-elect takes none (whether one runs shows in \"webhooks reachable\")",
				"run the adapter as this release's Deployment, which elects a leader")
		}
		return fail("adapter leader", "no adapter replica has ever taken the leader lease "+k.ns+"/"+leaderLease, "check the adapter Deployment's pods and their logs")
	}
	if err != nil {
		return fail("adapter leader", "the leader lease could not be read: "+err.Error(), readFix(err, "get leases.coordination.k8s.io in "+k.ns))
	}
	holder := ""
	if lease.Spec.HolderIdentity != nil {
		holder = *lease.Spec.HolderIdentity
	}
	return evalLease(holder, lease.Spec.RenewTime, lease.Spec.LeaseDurationSeconds, k.now)
}

// webhooks probes the conversion webhook with a dry-run create of a
// v1alpha1 BundleDeployment (stored as v1alpha2, so the API server must
// call the adapter), and checks the caBundles the adapter keeps.
func (k checker) webhooks(ctx context.Context) []CheckResult {
	var out []CheckResult
	probe := &rukpakv1alpha1.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "rukpak-kapp-check-"},
		Spec: rukpakv1alpha1.BundleDeploymentSpec{ProvisionerClassName: rukpakv1alpha2.ClassPlain,
			Template: rukpakv1alpha1.BundleTemplate{Spec: rukpakv1alpha1.BundleSpec{ProvisionerClassName: rukpakv1alpha2.ClassPlain,
				Source: rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeImage, Image: &rukpakv1alpha1.ImageSource{Ref: "example.com/rukpak-kapp-check:latest"}}}}},
	}
	err := k.c.Create(ctx, probe, client.DryRunAll)
	switch {
	case err == nil:
		out = append(out, ok("webhooks reachable", "the API server called the adapter's conversion webhook (a dry-run create of a v1alpha1 BundleDeployment)"))
	case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "cannot create resource"):
		// Someone who may only read (RBAC's refusal, which names no
		// webhook unless the user's name does, hence first): not
		// verified, which is no failure of the installation.
		out = append(out, warn("webhooks reachable", "not verified: you may not create BundleDeployments, and the check is a dry-run create of one (nothing is stored)",
			"run check as someone who may create bundledeployments.core.rukpak.io to verify the API server reaches the adapter's webhooks"))
	case strings.Contains(err.Error(), "webhook"):
		out = append(out, fail("webhooks reachable", "the API server cannot call the adapter's webhooks: "+err.Error(),
			"the webhooks are served by every adapter replica through the Service "+k.ns+"/rukpak-kapp-webhook: check the pods, the Service's endpoints and network policies"))
	default:
		out = append(out, fail("webhooks reachable", "a dry-run create of a v1alpha1 BundleDeployment was refused: "+err.Error(), "read the message; "+applyReleaseFix))
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	// A CRD that is missing or cannot be read is said by the CRDs line.
	if err := k.c.Get(ctx, client.ObjectKey{Name: bundleDeploymentF}, crd); err == nil {
		conv := crd.Spec.Conversion
		if conv == nil || conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
			out = append(out, fail("conversion caBundle", "the BundleDeployment CRD has no conversion webhook", applyReleaseFix))
		} else {
			out = append(out, evalCABundle("conversion caBundle", "the BundleDeployment CRD's conversion webhook", conv.Webhook.ClientConfig.CABundle, k.now))
		}
	}
	vwc := &unstructured.Unstructured{}
	vwc.SetAPIVersion("admissionregistration.k8s.io/v1")
	vwc.SetKind("ValidatingWebhookConfiguration")
	err = k.c.Get(ctx, client.ObjectKey{Name: webhookConfig}, vwc)
	switch {
	case apierrors.IsNotFound(err):
		out = append(out, fail("validating webhooks", "the ValidatingWebhookConfiguration "+webhookConfig+" (CRD upgrade safety, catalog upgrades) is not installed", applyReleaseFix))
	case err != nil:
		out = append(out, warn("validating webhooks", "not verified: the ValidatingWebhookConfiguration "+webhookConfig+" could not be read: "+err.Error(),
			readFix(err, "get validatingwebhookconfigurations.admissionregistration.k8s.io")))
	default:
		hooks, _, _ := unstructured.NestedSlice(vwc.Object, "webhooks")
		for _, h := range hooks {
			m, _ := h.(map[string]any)
			bundle, _, _ := unstructured.NestedString(m, "clientConfig", "caBundle")
			decoded := decodeBase64(bundle)
			r := evalCABundle("validating webhooks", fmt.Sprintf("webhook %v", m["name"]), decoded, k.now)
			if r.Status != CheckOK {
				out = append(out, r)
				return out
			}
		}
		out = append(out, ok("validating webhooks", fmt.Sprintf("%d webhooks of %s trust a valid CA", len(hooks), webhookConfig)))
	}
	return out
}

func (k checker) admission(ctx context.Context) CheckResult {
	const name = "admission policy"
	for _, kind := range []string{"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"} {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("admissionregistration.k8s.io/v1")
		u.SetKind(kind)
		if err := k.c.Get(ctx, client.ObjectKey{Name: admissionPolicy}, u); apierrors.IsForbidden(err) {
			return warn(name, fmt.Sprintf("not verified: the %s %s (config/admission) could not be read (%v)", kind, admissionPolicy, err),
				readFix(err, "get "+strings.ToLower(kind)+"s.admissionregistration.k8s.io"))
		} else if err != nil {
			return warn(name, fmt.Sprintf("the %s %s (config/admission) could not be read (%v): the adapter adds its finalizer itself, one write more per BundleDeployment", kind, admissionPolicy, err),
				"apply config/admission (Kubernetes 1.36 or newer)")
		}
	}
	return ok(name, "the finalizer policy "+admissionPolicy+" and its binding are installed")
}

// rbac asks the API server, as the adapter's ServiceAccount, for every
// right config/rbac gives the adapter (adapterRBAC), catalogs' included.
func (k checker) rbac(ctx context.Context) CheckResult {
	const name = "adapter RBAC"
	rights, err := adapterRights(adapterRBAC, k.ns)
	if err != nil {
		return warn(name, "not verified: "+err.Error(), "use a check built from this release's source")
	}
	allowed, err := k.adapterMayAll(ctx, rights)
	if err != nil {
		return notAsked(name, "what the adapter may do", err)
	}
	var missing []right
	for i, r := range rights {
		if !allowed[i] {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		return fail(name, k.adapterUser()+" may not: "+listRights(missing), "apply this release's config/rbac (its ClusterRole and Role rukpak-kapp)")
	}
	return ok(name, fmt.Sprintf("%s may do all %d things config/rbac grants it (what other namespaces grant it: \"namespace RBAC\")",
		k.adapterUser(), len(rights)))
}

// notAsked is the line of a check whose SubjectAccessReview could not be
// made: nothing is known to be wrong (someone who may only read gets this),
// and the fix names the right that would let check ask.
func notAsked(name, what string, err error) CheckResult {
	fix := "run check again"
	if apierrors.IsForbidden(err) {
		fix = "run check as someone who may create subjectaccessreviews.authorization.k8s.io"
	}
	return warn(name, "not verified: check could not ask the API server "+what+" ("+err.Error()+")", fix)
}

func (k checker) adapterUser() string { return "system:serviceaccount:" + k.ns + ":" + adapterName }

// adapterMayAll asks for every right at once, a few reviews at a time;
// allowed[i] answers rights[i].
func (k checker) adapterMayAll(ctx context.Context, rights []right) ([]bool, error) {
	allowed := make([]bool, len(rights))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(reviewsAtOnce)
	for i, r := range rights {
		g.Go(func() error {
			var err error
			allowed[i], err = k.adapterMay(gctx, r)
			return err
		})
	}
	return allowed, g.Wait()
}

// adapterMay asks the API server whether the adapter's ServiceAccount may
// do r (a SubjectAccessReview).
func (k checker) adapterMay(ctx context.Context, r right) (bool, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: k.adapterUser(), Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + k.ns, "system:authenticated"},
		ResourceAttributes: r.res, NonResourceAttributes: r.nonRes}}
	if err := k.c.Create(ctx, sar); err != nil {
		// Its caller says what it asked.
		return false, err
	}
	return sar.Status.Allowed, nil
}

// kappConfig compares how the adapter and kapp-controller reach servers:
// kapp-controller-config where kapp-controller reads it (the namespace of
// its Deployment, else the adapter's flag), the adapter's flag, its right
// to read it, and the Deployments' proxy variables.
func (k checker) kappConfig(ctx context.Context, kappDep, adapterDep *appsv1.Deployment) CheckResult {
	f := kappConfigFacts{adapterNamespace: kappControllerNamespaceOf(adapterDep), flagKnown: adapterDep != nil, adapterEnv: proxyEnv(adapterDep), kappEnv: proxyEnv(kappDep)}
	ns := f.adapterNamespace
	if kappDep != nil {
		f.kappNamespace, ns = kappDep.Namespace, kappDep.Namespace
	}
	if ns == "" {
		return ok(kappConfigCheck, "the adapter reads none (--kapp-controller-namespace is empty) and no kapp-controller Deployment was found to compare with")
	}
	cfg, err := kappconfig.Read(ctx, k.c, ns)
	if err != nil {
		return warn(kappConfigCheck, "kapp-controller-config could not be read: "+err.Error(), "run check with rights to read Secrets and ConfigMaps in "+ns)
	}
	f.config = cfg
	if cfg.Kind != "" && f.adapterNamespace != "" {
		f.readable, err = k.adapterMay(ctx, right{res: &authorizationv1.ResourceAttributes{Verb: "watch", Resource: strings.ToLower(cfg.Kind) + "s", Namespace: ns, Name: fetch.KappControllerConfigName}})
		if err != nil {
			return notAsked(kappConfigCheck, "whether the adapter may read "+cfg.Source(), err)
		}
	}
	return evalKappConfig(f)
}

// rukpak says whether rukpak's own controllers still run in the system
// namespace.
func (k checker) rukpak(ctx context.Context) CheckResult {
	const name = "rukpak"
	var deps appsv1.DeploymentList
	if err := k.c.List(ctx, &deps, client.InNamespace(k.ns)); err != nil {
		return warn(name, "the Deployments of "+k.ns+" could not be listed: "+err.Error(), readFix(err, "list deployments.apps in "+k.ns))
	}
	var running []string
	for _, d := range deps.Items {
		if d.Name == "core" || d.Name == "helm-provisioner" || d.Name == "rukpak-webhooks" {
			running = append(running, d.Name)
		}
	}
	if len(running) > 0 {
		return warn(name, "rukpak still runs in "+k.ns+" ("+strings.Join(running, ", ")+"): both claim the same classes",
			"plan the take-over: rukpak-kapp migrate plan (docs/migrating-from-rukpak.md)")
	}
	return ok(name, "rukpak does not run in "+k.ns)
}

func (k checker) bundleDeployments(ctx context.Context) CheckResult {
	var list rukpakv1alpha2.BundleDeploymentList
	if err := k.c.List(ctx, &list); err != nil {
		return warn("BundleDeployments", "they could not be listed: "+err.Error(), readFix(err, "list bundledeployments.core.rukpak.io"))
	}
	return evalBundleDeployments(list.Items)
}
