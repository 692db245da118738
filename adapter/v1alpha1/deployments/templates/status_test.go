package templates

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const (
	T, F, U = metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown
)

func c(typ string, s metav1.ConditionStatus, reason, msg string, gen int64) metav1.Condition {
	return metav1.Condition{Type: typ, Status: s, Reason: reason, Message: msg, ObservedGeneration: gen, LastTransitionTime: metav1.NewTime(t0)}
}

func bdAt(gen int64, conds ...metav1.Condition) *rukpakv1alpha1.BundleDeployment {
	bd := &rukpakv1alpha1.BundleDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: "bd", UID: "uid-bd", Generation: gen},
		Spec: rukpakv1alpha1.BundleDeploymentSpec{ProvisionerClassName: rukpakv1alpha1.ClassPlain,
			Template: BundleTemplateOf("git")},
	}
	bd.Status.Conditions = conds
	return bd
}

func BundleTemplateOf(sourceType string) rukpakv1alpha1.BundleTemplate {
	src := rukpakv1alpha1.BundleSource{Type: sourceType}
	switch sourceType {
	case "git":
		src.Git = &rukpakv1alpha1.GitSource{Repository: "https://git.example/r", Ref: rukpakv1alpha1.GitRef{Branch: "main"}}
	case "http":
		src.HTTP = &rukpakv1alpha1.HTTPSource{URL: "https://x.example/b.tgz"}
	}
	return rukpakv1alpha1.BundleTemplate{Spec: rukpakv1alpha1.BundleSpec{ProvisionerClassName: rukpakv1alpha1.ClassPlain, Source: src}}
}

func bundle(name string, status rukpakv1alpha1.BundleStatus) *rukpakv1alpha1.Bundle {
	b := &rukpakv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1}, Status: status}
	b.Spec = BundleTemplateOf("git").Spec
	return b
}

var pinned = &rukpakv1alpha2.BundleSource{Type: "git", Git: &rukpakv1alpha2.GitSource{Repository: "https://git.example/r", Ref: rukpakv1alpha2.GitRef{Commit: "abc123"}}}

func unpackedStatus(resolved *rukpakv1alpha2.BundleSource) rukpakv1alpha1.BundleStatus {
	st := rukpakv1alpha1.BundleStatus{Phase: rukpakv1alpha1.PhaseUnpacked, ObservedGeneration: 1,
		Conditions: []metav1.Condition{c("Unpacked", T, "UnpackSuccessful", "Successfully unpacked the git Bundle", 1)}}
	if resolved != nil {
		src := rukpakv1alpha1.SourceFromV1alpha2(*resolved)
		st.ResolvedSource = &src
	}
	return st
}

func TestStatus(t *testing.T) {
	installedB1 := c("Installed", T, "InstallationSucceeded", "Instantiated bundle b1 successfully", 1)
	healthy1 := c("Healthy", T, "Healthy", "BundleDeployment is healthy", 1)
	for _, tc := range []struct {
		name       string
		facts      Observed
		wantBD     rukpakv1alpha1.BundleDeploymentStatus
		wantBundle *rukpakv1alpha1.BundleStatus
		installed  bool
	}{{
		name: "a new Bundle waits for kapp-controller: pending, and the first install waits",
		facts: Observed{BD: bdAt(1), Bundle: bundle("b1", rukpakv1alpha1.BundleStatus{}), Status: rukpakv1alpha2.BundleDeploymentStatus{Conditions: []metav1.Condition{
			c("Unpacked", F, "UnpackPending", "Waiting for kapp-controller to pick up the App for this generation", 1),
			c("Installed", U, "InstallPending", "Waiting for the bundle to be unpacked", 1),
			c("Healthy", U, "InstallationStatusUnknown", "Waiting for the bundle to be installed", 1),
		}}},
		wantBD: rukpakv1alpha1.BundleDeploymentStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
			c("HasValidBundle", T, "UnpackPending", "Waiting for the b1 Bundle to be unpacked", 1),
			c("Installed", U, "InstallPending", "Waiting for the bundle to be unpacked", 1),
			c("Healthy", U, "InstallationStatusUnknown", "Waiting for the bundle to be installed", 1),
		}},
		wantBundle: &rukpakv1alpha1.BundleStatus{Phase: "Pending", ObservedGeneration: 1, Conditions: []metav1.Condition{
			c("Unpacked", F, "UnpackPending", "Waiting for kapp-controller to pick up the App for this generation", 1)}},
	}, {
		name: "kapp-controller fetches: unpacking",
		facts: Observed{BD: bdAt(1), Bundle: bundle("b1", rukpakv1alpha1.BundleStatus{}), Status: rukpakv1alpha2.BundleDeploymentStatus{Conditions: []metav1.Condition{
			c("Unpacked", F, "Unpacking", "Fetching git https://git.example/r", 1),
		}}},
		wantBD: rukpakv1alpha1.BundleDeploymentStatus{Conditions: []metav1.Condition{
			c("HasValidBundle", T, "UnpackPending", "Waiting for the b1 Bundle to be unpacked", 1)}},
		wantBundle: &rukpakv1alpha1.BundleStatus{Phase: "Unpacking", ObservedGeneration: 1, Conditions: []metav1.Condition{
			c("Unpacked", F, "Unpacking", "Fetching git https://git.example/r", 1)}},
	}, {
		name: "the fetch failed: the Bundle is failing and the BundleDeployment has no valid bundle",
		facts: Observed{BD: bdAt(1), Bundle: bundle("b1", rukpakv1alpha1.BundleStatus{}), Status: rukpakv1alpha2.BundleDeploymentStatus{Conditions: []metav1.Condition{
			c("Unpacked", F, "UnpackFailed", `source bundle content: fetch http: GET https://x/y: unexpected status "404 Not Found"`, 1),
			c("Installed", U, "InstallPending", "Waiting for the bundle to be unpacked", 1),
		}}},
		wantBD: rukpakv1alpha1.BundleDeploymentStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
			c("HasValidBundle", F, "UnpackFailed", `Failed to unpack the b1 Bundle: source bundle content: fetch http: GET https://x/y: unexpected status "404 Not Found"`, 1),
			c("Installed", U, "InstallPending", "Waiting for the bundle to be unpacked", 1),
		}},
		wantBundle: &rukpakv1alpha1.BundleStatus{Phase: "Failing", ObservedGeneration: 1, Conditions: []metav1.Condition{
			c("Unpacked", F, "UnpackFailed", `source bundle content: fetch http: GET https://x/y: unexpected status "404 Not Found"`, 1)}},
	}, {
		name: "the content is not a bundle of its class before any install: the Bundle fails, nothing is said installed",
		facts: Observed{BD: bdAt(1), Bundle: bundle("b1", rukpakv1alpha1.BundleStatus{}), Invalid: "invalid bundle: AllNamespace install mode must be enabled",
			Status: rukpakv1alpha2.BundleDeploymentStatus{Conditions: []metav1.Condition{
				c("Unpacked", T, "UnpackSuccessful", "Successfully unpacked the git Bundle", 1),
				c("Installed", F, "InstallFailed", "invalid bundle: AllNamespace install mode must be enabled", 1),
				c("Healthy", F, "InstallationStatusFalse", "Installed condition is false", 1),
			}}},
		wantBD: rukpakv1alpha1.BundleDeploymentStatus{Conditions: []metav1.Condition{
			c("HasValidBundle", F, "UnpackFailed", "Failed to unpack the b1 Bundle: invalid bundle: AllNamespace install mode must be enabled", 1),
		}},
		wantBundle: &rukpakv1alpha1.BundleStatus{Phase: "Failing", ObservedGeneration: 1, Conditions: []metav1.Condition{
			c("Unpacked", F, "UnpackFailed", "invalid bundle: AllNamespace install mode must be enabled", 1)}},
	}, {
		name: "an API the cluster does not serve fails the install, in rukpak v0.16's reason",
		facts: Observed{BD: bdAt(1), Bundle: bundle("b1", unpackedStatus(pinned)), Status: rukpakv1alpha2.BundleDeploymentStatus{Conditions: []metav1.Condition{
			c("Unpacked", T, "UnpackSuccessful", "Successfully unpacked the git Bundle", 1),
			c("Installed", F, "ErrorGettingReleaseState", "required resource not found, ensure CRDs are installed first: kapp: Error: Expected to find kind", 1),
			c("Healthy", F, "InstallationStatusFalse", "Installed condition is false", 1),
		}}},
		wantBD: rukpakv1alpha1.BundleDeploymentStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
			c("HasValidBundle", T, "UnpackSuccessful", "Successfully unpacked the b1 Bundle", 1),
			c("Installed", F, "InstallFailed", "required resource not found, ensure CRDs are installed first: kapp: Error: Expected to find kind", 1),
			c("Healthy", F, "InstallationStatusFalse", "Installed condition is false", 1),
		}},
		wantBundle: ptr(unpackedStatus(pinned)),
	}, {
		name: "kapp-controller deployed this generation: installed, active, the Bundle unpacked and pinned",
		facts: Observed{BD: bdAt(1), Bundle: bundle("b1", rukpakv1alpha1.BundleStatus{}), Resolved: pinned, Status: rukpakv1alpha2.BundleDeploymentStatus{Conditions: []metav1.Condition{
			c("Unpacked", T, "UnpackSuccessful", "Successfully unpacked the git Bundle", 1),
			c("Installed", T, "InstallationSucceeded", "Instantiated bundle bd", 1),
			c("Healthy", T, "Healthy", "BundleDeployment is healthy", 1),
		}}},
		wantBD: rukpakv1alpha1.BundleDeploymentStatus{ObservedGeneration: 1, ActiveBundle: "b1", Conditions: []metav1.Condition{
			c("HasValidBundle", T, "UnpackSuccessful", "Successfully unpacked the b1 Bundle", 1), installedB1, healthy1,
		}},
		wantBundle: ptr(unpackedStatus(pinned)),
		installed:  true,
	}, {
		name: "the install failed: Installed and Healthy false, nothing active",
		facts: Observed{BD: bdAt(1), Bundle: bundle("b1", rukpakv1alpha1.BundleStatus{}), Resolved: pinned, Status: rukpakv1alpha2.BundleDeploymentStatus{Conditions: []metav1.Condition{
			c("Unpacked", T, "UnpackSuccessful", "Successfully unpacked the git Bundle", 1),
			c("Installed", F, "InstallFailed", `required resource not found: no matches for kind "CatalogSource"`, 1),
			c("Healthy", F, "InstallationStatusFalse", "Installed condition is false", 1),
		}}},
		wantBD: rukpakv1alpha1.BundleDeploymentStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
			c("HasValidBundle", T, "UnpackSuccessful", "Successfully unpacked the b1 Bundle", 1),
			c("Installed", F, "InstallFailed", `required resource not found: no matches for kind "CatalogSource"`, 1),
			c("Healthy", F, "InstallationStatusFalse", "Installed condition is false", 1),
		}},
		wantBundle: ptr(unpackedStatus(pinned)),
	}, {
		name: "a new template whose content is invalid fails its Bundle; what is installed stays said and active",
		facts: Observed{BD: bdAt(2, c("HasValidBundle", T, "UnpackSuccessful", "Successfully unpacked the b1 Bundle", 1), installedB1, healthy1),
			Bundle:  bundle("b2", rukpakv1alpha1.BundleStatus{}),
			Invalid: "convert registry+v1 bundle to plain+v0 bundle: AllNamespace install mode must be enabled",
			Status: rukpakv1alpha2.BundleDeploymentStatus{Conditions: []metav1.Condition{
				c("Unpacked", T, "UnpackSuccessful", "Successfully unpacked the git Bundle", 2),
				c("Installed", F, "UpgradeFailed", "invalid bundle: ...", 2),
				c("Healthy", F, "InstallationStatusFalse", "Installed condition is false", 2),
			}}},
		wantBD: rukpakv1alpha1.BundleDeploymentStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
			c("HasValidBundle", F, "UnpackFailed", "Failed to unpack the b2 Bundle: convert registry+v1 bundle to plain+v0 bundle: AllNamespace install mode must be enabled", 2),
			installedB1, healthy1,
		}},
		wantBundle: &rukpakv1alpha1.BundleStatus{Phase: "Failing", ObservedGeneration: 1, Conditions: []metav1.Condition{
			c("Unpacked", F, "UnpackFailed", "convert registry+v1 bundle to plain+v0 bundle: AllNamespace install mode must be enabled", 1)}},
	}, {
		name: "a new template is fetched: its Bundle pending, the old one stays active until kapp-controller deploys the new",
		facts: Observed{BD: bdAt(2, c("HasValidBundle", T, "UnpackSuccessful", "Successfully unpacked the b1 Bundle", 1), installedB1, healthy1),
			Bundle: bundle("b2", rukpakv1alpha1.BundleStatus{}),
			Status: rukpakv1alpha2.BundleDeploymentStatus{Conditions: []metav1.Condition{
				c("Unpacked", T, "UnpackSuccessful", "Successfully unpacked the git Bundle", 2),
				c("Installed", T, "InstallationSucceeded", "Instantiated bundle bd", 1),
				c("Healthy", F, "Unhealthy", "deployment default/x: 0 of 1 replicas available", 1),
			}}},
		wantBD: rukpakv1alpha1.BundleDeploymentStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
			c("HasValidBundle", T, "UnpackSuccessful", "Successfully unpacked the b2 Bundle", 2),
			installedB1, c("Healthy", F, "Unhealthy", "deployment default/x: 0 of 1 replicas available", 1),
		}},
		wantBundle: &rukpakv1alpha1.BundleStatus{Phase: "Unpacked", ObservedGeneration: 1, Conditions: []metav1.Condition{
			c("Unpacked", T, "UnpackSuccessful", "Successfully unpacked the git Bundle", 1)}},
	}, {
		name: "the new template's upgrade failed: Installed false for it, the old Bundle stays active",
		facts: Observed{BD: bdAt(2, c("HasValidBundle", T, "UnpackSuccessful", "Successfully unpacked the b1 Bundle", 1), installedB1, healthy1),
			Bundle: bundle("b2", unpackedStatus(pinned)),
			Status: rukpakv1alpha2.BundleDeploymentStatus{Conditions: []metav1.Condition{
				c("Unpacked", T, "UnpackSuccessful", "Successfully unpacked the git Bundle", 2),
				c("Installed", F, "UpgradeFailed", "kapp: Error: ...", 2),
				c("Healthy", F, "InstallationStatusFalse", "Installed condition is false", 2),
			}}},
		wantBD: rukpakv1alpha1.BundleDeploymentStatus{ObservedGeneration: 2, Conditions: []metav1.Condition{
			c("HasValidBundle", T, "UnpackSuccessful", "Successfully unpacked the b2 Bundle", 2),
			c("Installed", F, "UpgradeFailed", "kapp: Error: ...", 2),
			c("Healthy", F, "InstallationStatusFalse", "Installed condition is false", 2),
		}},
		wantBundle: ptr(unpackedStatus(pinned)),
	}, {
		name: "a config change re-fetches the same Bundle: it stays unpacked",
		facts: Observed{BD: bdAt(3, c("HasValidBundle", T, "UnpackSuccessful", "Successfully unpacked the b1 Bundle", 1), installedB1, healthy1),
			Bundle: bundle("b1", unpackedStatus(pinned)),
			Status: rukpakv1alpha2.BundleDeploymentStatus{Conditions: []metav1.Condition{
				c("Unpacked", F, "UnpackPending", "Waiting for kapp-controller to pick up the App for this generation", 3),
				c("Installed", T, "InstallationSucceeded", "Instantiated bundle bd", 1),
				c("Healthy", T, "Healthy", "BundleDeployment is healthy", 1),
			}}},
		wantBD: rukpakv1alpha1.BundleDeploymentStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
			c("HasValidBundle", T, "UnpackSuccessful", "Successfully unpacked the b1 Bundle", 3), installedB1, healthy1,
		}},
		wantBundle: ptr(unpackedStatus(pinned)),
	}, {
		name: "no Bundle could be made: HasValidBundle unknown with the reason, the rest as it was",
		facts: Observed{BD: bdAt(5, installedB1), BundleFailure: ErrMaxGenerated + ": ...",
			Status: rukpakv1alpha2.BundleDeploymentStatus{Conditions: []metav1.Condition{
				c("Installed", T, "InstallationSucceeded", "Instantiated bundle bd", 1),
			}}},
		wantBD: rukpakv1alpha1.BundleDeploymentStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
			installedB1, c("HasValidBundle", U, "ReconcileFailed", ErrMaxGenerated+": ...", 5),
		}},
	}, {
		name: "a delete is reported whatever the Bundle says",
		facts: func() Observed {
			bd := bdAt(1, installedB1)
			bd.DeletionTimestamp = &metav1.Time{Time: t0}
			return Observed{BD: bd, Bundle: bundle("b1", unpackedStatus(pinned)), Status: rukpakv1alpha2.BundleDeploymentStatus{Conditions: []metav1.Condition{
				c("Installed", F, "Deleting", "Removing the objects this BundleDeployment installed", 1),
				c("Healthy", F, "InstallationStatusFalse", "Installed condition is false", 1),
			}}}
		}(),
		wantBD: rukpakv1alpha1.BundleDeploymentStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
			c("Installed", F, "Deleting", "Removing the objects this BundleDeployment installed", 1),
			c("HasValidBundle", T, "UnpackSuccessful", "Successfully unpacked the b1 Bundle", 1),
			c("Healthy", F, "InstallationStatusFalse", "Installed condition is false", 1),
		}},
		wantBundle: ptr(unpackedStatus(pinned)),
	}, {
		name: "an http Bundle without a pinned source resolves to its source, as rukpak's did",
		facts: func() Observed {
			b := bundle("b1", rukpakv1alpha1.BundleStatus{})
			b.Spec = BundleTemplateOf("http").Spec
			return Observed{BD: bdAt(1), Bundle: b, Status: rukpakv1alpha2.BundleDeploymentStatus{Conditions: []metav1.Condition{
				c("Unpacked", T, "UnpackSuccessful", "Successfully unpacked the http Bundle", 1),
			}}}
		}(),
		wantBD: rukpakv1alpha1.BundleDeploymentStatus{Conditions: []metav1.Condition{
			c("HasValidBundle", T, "UnpackSuccessful", "Successfully unpacked the b1 Bundle", 1)}},
		wantBundle: &rukpakv1alpha1.BundleStatus{Phase: "Unpacked", ObservedGeneration: 1, ResolvedSource: ptr(BundleTemplateOf("http").Spec.Source),
			Conditions: []metav1.Condition{c("Unpacked", T, "UnpackSuccessful", "Successfully unpacked the http Bundle", 1)}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			tc.facts.Now = t0
			in := tc.facts.BD.DeepCopy()
			got := Status(tc.facts)
			sortConds := cmpopts.SortSlices(func(a, b metav1.Condition) bool { return a.Type < b.Type })
			if d := cmp.Diff(tc.wantBD, got.BD, sortConds); d != "" {
				t.Errorf("BundleDeployment status (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantBundle, got.Bundle, sortConds); d != "" {
				t.Errorf("Bundle status (-want +got):\n%s", d)
			}
			if got.Installed != tc.installed {
				t.Errorf("Installed = %v, want %v", got.Installed, tc.installed)
			}
			if d := cmp.Diff(in, tc.facts.BD); d != "" {
				t.Errorf("the BundleDeployment read changed:\n%s", d)
			}
		})
	}
}

// A status computed again later with the same outcome is the same status:
// no transition time moves, so nothing is written.
func TestStatusIsStable(t *testing.T) {
	f := Observed{BD: bdAt(1), Bundle: bundle("b1", rukpakv1alpha1.BundleStatus{}), Resolved: pinned, Now: t0,
		Status: rukpakv1alpha2.BundleDeploymentStatus{Conditions: []metav1.Condition{
			c("Unpacked", T, "UnpackSuccessful", "Successfully unpacked the git Bundle", 1),
			c("Installed", T, "InstallationSucceeded", "Instantiated bundle bd", 1),
			c("Healthy", T, "Healthy", "BundleDeployment is healthy", 1),
		}}}
	first := Status(f)
	f.BD.Status, f.Bundle.Status, f.Now = first.BD, *first.Bundle, t0.Add(time.Hour)
	second := Status(f)
	if d := cmp.Diff(first, second); d != "" {
		t.Errorf("a second reconcile changed the status:\n%s", d)
	}
	if got := apimeta.FindStatusCondition(second.BD.Conditions, "Installed"); !got.LastTransitionTime.Time.Equal(t0) {
		t.Errorf("lastTransitionTime moved to %v", got.LastTransitionTime)
	}
}

func TestInstalledMessage(t *testing.T) {
	for _, tc := range []struct{ v1alpha2, want string }{
		{"Instantiated bundle bd", "Instantiated bundle bd-5f7 successfully"},
		{"Instantiated bundle bd. Removing content Secrets the App no longer reads failed, the adapter retries: x",
			"Instantiated bundle bd-5f7 successfully. Removing content Secrets the App no longer reads failed, the adapter retries: x"},
		{"something else", "Instantiated bundle bd-5f7 successfully"},
	} {
		if got := installedMessage("bd", "bd-5f7", tc.v1alpha2); got != tc.want {
			t.Errorf("installedMessage(%q) = %q, want %q", tc.v1alpha2, got, tc.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }
