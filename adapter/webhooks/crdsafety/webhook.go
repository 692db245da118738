package crdsafety

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/translate"
	"github.com/rukpak-kapp/rukpak-kapp/adapter/webhooks"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// What config/webhook declares.
const (
	// Path is where the API server sends the CRD updates to judge.
	Path = "/validate-crd-upgrade-safety"
	// ConfigurationName is the ValidatingWebhookConfiguration whose
	// caBundle the adapter keeps.
	ConfigurationName = "rukpak-kapp"
	// WebhookName is the webhook's name, which the API server's refusal
	// quotes ("admission webhook ... denied the request").
	WebhookName = "crd-upgrade-safety.core.rukpak.io"
)

// TimeBound is how long the existing custom resources are read before
// the check gives up and refuses: well within the webhook's 10 s timeout,
// so the API server reports this check's words, not its own timeout.
const TimeBound = 7 * time.Second

// Options are what the check needs to know of the adapter.
type Options struct {
	// SystemNamespace and AppNamespaces are where the install accounts
	// live.
	SystemNamespace string
	AppNamespaces   []string
	// InstallerAccount is the default install account (in SystemNamespace).
	InstallerAccount string
	// Claims says the adapter installs a BundleDeployment's class.
	Claims func(*rukpakv1alpha2.BundleDeployment) bool
}

// OptionsFrom are the options of an adapter configured with cfg, claiming
// the classes claims says.
func OptionsFrom(cfg translate.Config, claims func(*rukpakv1alpha2.BundleDeployment) bool) Options {
	return Options{SystemNamespace: cfg.SystemNamespace, AppNamespaces: cfg.AppNamespaces, InstallerAccount: cfg.ServiceAccountName, Claims: claims}
}

// Add serves the check on srv and has srv keep the configuration's
// caBundle; nil srv (webhooks turned off) adds nothing.
func Add(mgr ctrl.Manager, srv *webhooks.Server, o Options) error {
	if srv == nil {
		return nil
	}
	h := &handler{opts: o, reader: mgr.GetAPIReader(), cfg: mgr.GetConfig(), listers: map[string]dynamic.Interface{}}
	srv.Register(Path, &admission.Webhook{Handler: h})
	return srv.AddCABundleTarget(webhooks.ValidatingWebhookConfiguration(ConfigurationName))
}

type handler struct {
	opts   Options
	reader client.Reader
	cfg    *rest.Config

	mu      sync.Mutex
	listers map[string]dynamic.Interface
}

func (h *handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Update {
		return admission.Allowed("only updates are judged")
	}
	old, new := &apiextensionsv1.CustomResourceDefinition{}, &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal(req.OldObject.Raw, old); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode the old CRD: %w", err))
	}
	if err := json.Unmarshal(req.Object.Raw, new); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode the new CRD: %w", err))
	}
	logger := log.FromContext(ctx).WithValues("crd", new.Name, "user", req.UserInfo.Username)
	owner := new.Labels[rukpakv1alpha2.LabelOwnerName]
	if owner == "" {
		owner = old.Labels[rukpakv1alpha2.LabelOwnerName]
	}
	in := Input{Old: old, New: new, Operation: string(req.Operation), BundleDeployment: owner}
	if owner != "" {
		bd := &rukpakv1alpha2.BundleDeployment{}
		err := h.reader.Get(ctx, client.ObjectKey{Name: owner}, bd)
		switch {
		case apierrors.IsNotFound(err):
			return admission.Allowed("BundleDeployment " + owner + " does not exist")
		case err != nil:
			return admission.Errored(http.StatusInternalServerError, fmt.Errorf("read BundleDeployment %s to see whether it opts out of the CRD upgrade safety check: %w", owner, err))
		case h.opts.Claims != nil && !h.opts.Claims(bd):
			return admission.Allowed("BundleDeployment " + owner + " is of a class rukpak-kapp does not install")
		}
		in.OptedOut = OptedOut(bd)
	}
	as := h.readAs(req.UserInfo.Username)
	lister, err := h.lister(as, old)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	in.Objects = lister
	bounded, cancel := context.WithTimeout(ctx, TimeBound)
	defer cancel()
	start := time.Now()
	d := Decide(bounded, in)
	logger.Info("judged a CRD update", "bundleDeployment", owner, "allowed", d.Allowed, "reason", d.Reason, "customResourcesRead", d.Listed,
		"readAs", as, "took", time.Since(start).Round(time.Millisecond).String())
	if d.Allowed {
		return admission.Allowed(d.Reason)
	}
	return admission.Denied(d.Message)
}

// readAs is the account the existing custom resources are read with:
// the one that updates the CRD when it is an install account in one of
// the adapter's namespaces (kapp, deploying an App), else the default
// install account. The adapter's own account may read no custom
// resources: which kinds bundles bring is not known in advance, and a
// wildcard grant is what config/rbac never has.
func (h *handler) readAs(user string) string {
	if rest, ok := strings.CutPrefix(user, "system:serviceaccount:"); ok {
		ns, _, _ := strings.Cut(rest, ":")
		if ns == h.opts.SystemNamespace || slices.Contains(h.opts.AppNamespaces, ns) {
			return user
		}
	}
	return "system:serviceaccount:" + h.opts.SystemNamespace + ":" + h.opts.InstallerAccount
}

// lister lists old's custom resources as user (config/rbac lets the
// adapter act as the ServiceAccounts of its namespaces, through
// constrained impersonation, to list and for nothing else here).
func (h *handler) lister(user string, crd *apiextensionsv1.CustomResourceDefinition) (Lister, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	dyn, ok := h.listers[user]
	if !ok {
		cfg := rest.CopyConfig(h.cfg)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
		var err error
		if dyn, err = dynamic.NewForConfig(cfg); err != nil {
			return nil, fmt.Errorf("make a client that reads as %s: %w", user, err)
		}
		h.listers[user] = dyn
	}
	return NewLister(dyn, crd), nil
}

// OptedOut says bd turns the check off for its CRDs
// (spec.preflight.crdUpgradeSafety.disabled).
func OptedOut(bd *rukpakv1alpha2.BundleDeployment) bool {
	return bd.Spec.Preflight != nil && bd.Spec.Preflight.CRDUpgradeSafety != nil && bd.Spec.Preflight.CRDUpgradeSafety.Disabled
}

// NewLister lists crd's custom resources through dyn, as the webhook
// lists them (for a plan of an upgrade, with the reader's own rights).
func NewLister(dyn dynamic.Interface, crd *apiextensionsv1.CustomResourceDefinition) Lister {
	return &dynamicLister{dyn: dyn, group: crd.Spec.Group, resource: crd.Spec.Names.Plural}
}

type dynamicLister struct {
	dyn             dynamic.Interface
	group, resource string
}

func (l *dynamicLister) List(ctx context.Context, version, token string, limit int64) (*unstructured.UnstructuredList, error) {
	gvr := runtimeschema.GroupVersionResource{Group: l.group, Version: version, Resource: l.resource}
	return l.dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: limit, Continue: token})
}
