package translate

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Config is what every App shares: where it lives and how it deploys.
type Config struct {
	// SystemNamespace holds the Apps and every Secret or ConfigMap a BD references.
	SystemNamespace string
	// AppNamespaces, when set, are the namespaces the Apps are spread over
	// instead (see Placement), each served by a kapp-controller of its own.
	AppNamespaces []string
	// AppNamespace is where this App goes when not SystemNamespace: the
	// reconciler sets it per BundleDeployment from AppNamespaces.
	AppNamespace string
	// ServiceAccountName is the installer account kapp deploys with.
	ServiceAccountName string
	// SyncPeriod is how often kapp-controller re-applies an unchanged App.
	SyncPeriod time.Duration
	// BranchSyncPeriod is how often a BD that tracks a git branch looks for
	// new commits: the App's sync period when kapp-controller fetches, the
	// adapter's own check when it fetches.
	BranchSyncPeriod time.Duration
	// TemplateTimeout is how long kapp-controller's template step may run
	// before the adapter reports it as failed (0: never). kapp-controller
	// itself never stops the step.
	TemplateTimeout time.Duration
	// StepHealthTimeout is how long a deployed step of a walk along a
	// catalog channel may keep installed objects InProgress (or being
	// deleted) before the walk stops there; 0 waits without a bound.
	StepHealthTimeout time.Duration
	// ContentAddress is where the adapter's webhook server is reached
	// (scheme, host and port): a BundleDeployment's and a Bundle's
	// status.contentURL point there. Empty: no contentURL is written.
	ContentAddress string
}

// UnsupportedError says that a BundleDeployment asks for something this
// version cannot install. It is permanent until the spec changes.
type UnsupportedError struct{ Reason string }

func (e *UnsupportedError) Error() string { return e.Reason }

// App returns the App that installs bd. content is nil unless the adapter
// fetched the bundle itself (see AdapterFetches).
func App(bd *rukpakv1alpha2.BundleDeployment, cfg Config, content *Packed) (*kappctrlv1alpha1.App, error) {
	fetch, err := fetchFor(bd, content)
	if err != nil {
		return nil, err
	}
	syncPeriod, err := syncPeriodFor(bd, cfg, content)
	if err != nil {
		return nil, err
	}
	template, err := templateFor(bd, ownerLabelsConfig(bd.Name), content)
	if err != nil {
		return nil, err
	}
	sa, err := serviceAccountFor(bd, cfg)
	if err != nil {
		return nil, err
	}
	annotations, err := madeFrom(bd, content)
	if err != nil {
		return nil, err
	}
	app := &kappctrlv1alpha1.App{
		TypeMeta: metav1.TypeMeta{APIVersion: kappctrlv1alpha1.SchemeGroupVersion.String(), Kind: "App"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            bd.Name,
			Namespace:       cfg.appNamespace(),
			Labels:          OwnerLabels(bd.Name),
			Annotations:     annotations,
			OwnerReferences: OwnerReferences(bd),
			Finalizers:      []string{KappControllerFinalizer},
		},
		Spec: kappctrlv1alpha1.AppSpec{
			ServiceAccountName: sa,
			SyncPeriod:         &metav1.Duration{Duration: syncPeriod},
			DefaultNamespace:   bd.Spec.InstallNamespace,
			Fetch:              []kappctrlv1alpha1.AppFetch{fetch},
			Template:           template,
			Deploy:             deployFor(bd),
		},
	}
	return app, nil
}

// madeFrom records on the App what its spec was made from: the
// BundleDeployment's generation and, for content the adapter fetched, the
// pinned source.
func madeFrom(bd *rukpakv1alpha2.BundleDeployment, content *Packed) (map[string]string, error) {
	a := map[string]string{rukpakv1alpha2.AnnotationBundleGeneration: strconv.FormatInt(bd.Generation, 10)}
	if content != nil && content.Resolved != nil {
		if err := recordJSON(a, rukpakv1alpha2.AnnotationResolvedSource, content.Resolved); err != nil {
			return nil, err
		}
	}
	if content != nil && content.Bundle != nil {
		if err := recordJSON(a, rukpakv1alpha2.AnnotationBundleMetadata, content.Bundle); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func recordJSON(annotations map[string]string, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("record %s: %w", key, err)
	}
	annotations[key] = string(data)
	return nil
}

// syncPeriodFor is the BD's own period when it asks for one; otherwise it
// is shortened only for Apps whose own fetch follows a branch, as
// everything else changes through events.
func syncPeriodFor(bd *rukpakv1alpha2.BundleDeployment, cfg Config, content *Packed) (time.Duration, error) {
	if v, ok := bd.Annotations[rukpakv1alpha2.AnnotationSyncPeriod]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return 0, &UnsupportedError{Reason: fmt.Sprintf("annotation %s: %q is not a positive duration such as 30s or 5m", rukpakv1alpha2.AnnotationSyncPeriod, v)}
		}
		return d, nil
	}
	if TracksBranch(bd) && content == nil && cfg.BranchSyncPeriod > 0 && cfg.BranchSyncPeriod < cfg.SyncPeriod {
		return jittered(cfg.BranchSyncPeriod, bd.Name), nil
	}
	return jittered(cfg.SyncPeriod, bd.Name), nil
}

// TracksBranch reports whether bd follows a moving git branch.
func TracksBranch(bd *rukpakv1alpha2.BundleDeployment) bool {
	g := bd.Spec.Source.Git
	return bd.Spec.Source.Type == rukpakv1alpha2.SourceTypeGit && g != nil && g.Ref.Branch != ""
}

// serviceAccountFor is the installer account unless the BD names its own.
func serviceAccountFor(bd *rukpakv1alpha2.BundleDeployment, cfg Config) (string, error) {
	name, ok := bd.Annotations[rukpakv1alpha2.AnnotationServiceAccount]
	if !ok {
		return cfg.ServiceAccountName, nil
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", &UnsupportedError{Reason: fmt.Sprintf("annotation %s: %q is not a ServiceAccount name: %s",
			rukpakv1alpha2.AnnotationServiceAccount, name, strings.Join(errs, "; "))}
	}
	return name, nil
}

// OwnerLabels are the labels that tie an object to its BundleDeployment.
func OwnerLabels(bdName string) map[string]string {
	return map[string]string{
		rukpakv1alpha2.LabelOwnerKind: rukpakv1alpha2.OwnerKind,
		rukpakv1alpha2.LabelOwnerName: bdName,
	}
}

// OwnerReferences makes bd the controller of an object the adapter creates.
func OwnerReferences(bd *rukpakv1alpha2.BundleDeployment) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{
		APIVersion:         rukpakv1alpha2.GroupVersion.String(),
		Kind:               rukpakv1alpha2.OwnerKind,
		Name:               bd.Name,
		UID:                bd.UID,
		Controller:         &yes,
		BlockOwnerDeletion: &yes,
	}}
}

// kappConfigFile is added to the template output; kapp reads it as its own
// configuration instead of deploying it.
const kappConfigFile = "rukpak-kapp-owner-labels.yml"

// ownerLabelsConfig is a kapp Config that puts the owner labels on every
// object kapp applies, so installed objects can be traced to their BD, and
// has kapp apply a bundle's CRDs before anything else (see crdsFirst).
func ownerLabelsConfig(bdName string) string {
	return fmt.Sprintf(`apiVersion: kapp.k14s.io/v1alpha1
kind: Config
additionalLabels:
  %s: %s
  %s: %q
`, rukpakv1alpha2.LabelOwnerKind, rukpakv1alpha2.OwnerKind, rukpakv1alpha2.LabelOwnerName, bdName) + crdsFirst
}

// crdsFirst makes every other change of a deploy wait for the bundle's
// CRDs to be applied: kapp's own rules only order custom resources after
// their CRDs, and apply everything else at once. So when the CRD upgrade
// safety check refuses a CRD update, kapp stops there, and nothing of the
// refused bundle (no ConfigMap changed, no Deployment rolled, no object
// pruned) reaches the cluster. A deploy that changes no CRD is not
// slowed: the group is empty or has nothing to do.
const crdsFirst = `changeRuleBindings:
- rules:
  - upsert after upserting change-groups.kapp.k14s.io/crds
  - delete after upserting change-groups.kapp.k14s.io/crds
  resourceMatchers:
  - notMatcher:
      matcher:
        apiGroupKindMatcher: {kind: CustomResourceDefinition, apiGroup: apiextensions.k8s.io}
`
