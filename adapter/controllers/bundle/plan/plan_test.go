package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/status"
	rukpakv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

func bundle(src rukpakv1alpha1.BundleSource, st rukpakv1alpha1.BundleStatus) *rukpakv1alpha1.Bundle {
	return &rukpakv1alpha1.Bundle{
		ObjectMeta: metav1.ObjectMeta{Name: "combo", UID: "uid-combo", Generation: 1},
		Spec:       rukpakv1alpha1.BundleSpec{ProvisionerClassName: rukpakv1alpha1.ClassPlain, Source: src},
		Status:     st,
	}
}

func imageSource(ref string) rukpakv1alpha1.BundleSource {
	return rukpakv1alpha1.BundleSource{Type: rukpakv1alpha1.SourceTypeImage, Image: &rukpakv1alpha1.ImageSource{Ref: ref}}
}

var (
	tagged = imageSource("registry.example/combo:v1")
	pinned = imageSource("registry.example/combo@sha256:abc")
	url    = "https://rukpak-kapp-webhook.rukpak-system.svc/bundles/combo.tgz"
)

func unpackedStatus(contentURL string) rukpakv1alpha1.BundleStatus {
	return rukpakv1alpha1.BundleStatus{
		Phase: rukpakv1alpha1.PhaseUnpacked, ResolvedSource: &pinned, ObservedGeneration: 1, ContentURL: contentURL,
		Conditions: []metav1.Condition{{Type: "Unpacked", Status: "True", Reason: "UnpackSuccessful", Message: "Successfully unpacked the image Bundle", ObservedGeneration: 1}},
	}
}

func TestPlan(t *testing.T) {
	failing := unpackedStatus("")
	failing.Phase, failing.ResolvedSource = rukpakv1alpha1.PhaseFailing, nil
	failing.Conditions[0].Status, failing.Conditions[0].Reason = "False", "UnpackFailed"
	older := unpackedStatus(url)
	older.ObservedGeneration = 0
	noCondition := unpackedStatus(url)
	noCondition.Conditions = nil
	for _, tc := range []struct {
		name   string
		status rukpakv1alpha1.BundleStatus
		stored bool
		want   Step
	}{
		{"never looked at", rukpakv1alpha1.BundleStatus{}, false, Unpack},
		{"failing", failing, false, Unpack},
		{"unpacked, kept, said", unpackedStatus(url), true, Rest},
		{"unpacked, kept, another contentURL", unpackedStatus("https://core.rukpak-system.svc/bundles/combo.tgz"), true, Report},
		{"unpacked, not kept here (a restart, a take-over)", unpackedStatus(url), false, Refetch},
		{"unpacked for an older generation", older, true, Unpack},
		{"a phase without its condition", noCondition, true, Unpack},
		{"deleted, unpacked", unpackedStatus(url), true, Deleting},
		{"deleted, never looked at", rukpakv1alpha1.BundleStatus{}, false, Deleting},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := bundle(tagged, tc.status)
			if strings.HasPrefix(tc.name, "deleted") {
				b.DeletionTimestamp = &metav1.Time{Time: t0}
			}
			if got := Plan(b, tc.stored, url); got != tc.want {
				t.Fatalf("Plan = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	cond := func(status metav1.ConditionStatus, reason, msg string) []metav1.Condition {
		return []metav1.Condition{{Type: "Unpacked", Status: status, Reason: reason, Message: msg, ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(t0)}}
	}
	for _, tc := range []struct {
		name string
		in   Outcome
		want rukpakv1alpha1.BundleStatus
	}{
		{"unpacking", Outcome{Phase: Unpacking, Source: "image registry.example/combo:v1"}, rukpakv1alpha1.BundleStatus{
			Phase: "Unpacking", ObservedGeneration: 1,
			Conditions: cond("False", "Unpacking", "Unpacking the image Bundle: fetching image registry.example/combo:v1")}},
		{"unpacked", Outcome{Phase: Unpacked, Resolved: &pinned, ContentURL: url}, rukpakv1alpha1.BundleStatus{
			Phase: "Unpacked", ObservedGeneration: 1, ResolvedSource: &pinned, ContentURL: url,
			Conditions: cond("True", "UnpackSuccessful", "Successfully unpacked the image Bundle")}},
		{"unpacked, not served", Outcome{Phase: Unpacked, Resolved: &pinned}, rukpakv1alpha1.BundleStatus{
			Phase: "Unpacked", ObservedGeneration: 1, ResolvedSource: &pinned,
			Conditions: cond("True", "UnpackSuccessful", "Successfully unpacked the image Bundle")}},
		{"source failed, retried", Outcome{Phase: SourceFailed, Source: "image registry.example/combo:v1", Retrying: true,
			Cause: "error fetching image descriptor: GET https://u:p@registry.example/v2/: MANIFEST_UNKNOWN"}, rukpakv1alpha1.BundleStatus{
			Phase: "Failing", ObservedGeneration: 1,
			Conditions: cond("False", "UnpackFailed", "source bundle content: error fetching image descriptor: GET https://***@registry.example/v2/: MANIFEST_UNKNOWN "+
				"(fetching image registry.example/combo:v1); retrying with backoff")}},
		{"source failed, retried at a time it names", Outcome{Phase: SourceFailed, Source: "http https://files.example/b.tgz", Retrying: true,
			NextAttempt: time.Date(2026, 12, 3, 16, 4, 5, 0, time.UTC), Cause: `get https://files.example/b.tgz: unexpected status "404 Not Found"`}, rukpakv1alpha1.BundleStatus{
			Phase: "Failing", ObservedGeneration: 1,
			Conditions: cond("False", "UnpackFailed", `source bundle content: get https://files.example/b.tgz: unexpected status "404 Not Found" `+
				"(fetching http https://files.example/b.tgz); retrying with backoff, next attempt at 2026-12-03T16:04:05Z")}},
		{"invalid content", Outcome{Phase: Invalid, Cause: "found zero objects: plain+v0 bundles are required to contain at least one object"}, rukpakv1alpha1.BundleStatus{
			Phase: "Failing", ObservedGeneration: 1,
			Conditions: cond("False", "UnpackFailed", "invalid bundle: found zero objects: plain+v0 bundles are required to contain at least one object")}},
		{"the adapter's own failure", Outcome{Phase: Failed, Cause: "the adapter's content store is full", Retrying: true}, rukpakv1alpha1.BundleStatus{
			Phase: "Failing", ObservedGeneration: 1,
			Conditions: cond("False", "UnpackFailed", "The image Bundle could not be unpacked: the adapter's content store is full; retrying with backoff")}},
		{"a failure without words", Outcome{Phase: Failed, Cause: "<nil>"}, rukpakv1alpha1.BundleStatus{
			Phase: "Failing", ObservedGeneration: 1,
			Conditions: cond("False", "UnpackFailed", "The image Bundle could not be unpacked: the adapter was given no cause; its log has the failure")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Whatever was said before: a Failing status unpacked again clears nothing by accident.
			before := unpackedStatus(url)
			before.Conditions[0].LastTransitionTime = metav1.NewTime(t0.Add(-time.Hour))
			got := Status(bundle(tagged, before), tc.in, t0)
			if tc.in.Phase == Unpacked {
				// The same news keeps its transition time.
				tc.want.Conditions[0].LastTransitionTime = metav1.NewTime(t0.Add(-time.Hour))
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Fatalf("status (-want +got):\n%s", d)
			}
			if c := got.Conditions[0]; c.Message == "" || strings.Contains(c.Message, "<nil>") {
				t.Fatalf("message %q", c.Message)
			}
		})
	}
}

func TestStatus_FromNothing(t *testing.T) {
	got := Status(bundle(tagged, rukpakv1alpha1.BundleStatus{}), Outcome{Phase: Unpacked, Resolved: &pinned, ContentURL: url}, t0)
	want := unpackedStatus(url)
	if d := cmp.Diff(want, got, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); d != "" {
		t.Fatal(d)
	}
	if !ReportsUnpacked(&rukpakv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Status: got}) {
		t.Fatal("a status Status made for Unpacked does not read as unpacked")
	}
}

func TestGenerated(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name string
		refs []metav1.OwnerReference
		want bool
	}{
		{"no owner", nil, false},
		{"a BundleDeployment controls it", []metav1.OwnerReference{{APIVersion: "core.rukpak.io/v1alpha1", Kind: "BundleDeployment", Name: "bd", Controller: &yes}}, true},
		{"at v1alpha2", []metav1.OwnerReference{{APIVersion: "core.rukpak.io/v1alpha2", Kind: "BundleDeployment", Name: "bd", Controller: &yes}}, true},
		{"owned, not controlled", []metav1.OwnerReference{{APIVersion: "core.rukpak.io/v1alpha1", Kind: "BundleDeployment", Name: "bd", Controller: &no}}, false},
		{"another group's BundleDeployment", []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "BundleDeployment", Name: "bd", Controller: &yes}}, false},
		{"controlled by something else", []metav1.OwnerReference{{APIVersion: "olm.operatorframework.io/v1alpha1", Kind: "ClusterExtension", Name: "x", Controller: &yes}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := bundle(tagged, rukpakv1alpha1.BundleStatus{})
			b.OwnerReferences = tc.refs
			if got := Generated(b); got != tc.want {
				t.Fatalf("Generated = %v", got)
			}
		})
	}
}

func TestView(t *testing.T) {
	b := bundle(tagged, rukpakv1alpha1.BundleStatus{})
	plain := View(b, rukpakv1alpha2.ClassPlain, pinned, "rukpak-system")
	if plain.Spec.InstallNamespace != "rukpak-system" || plain.Spec.Source.Image.Ref != pinned.Image.Ref || plain.Name != "combo" || plain.UID != "uid-combo" {
		t.Fatalf("plain view %+v", plain)
	}
	// rukpak v0.16 chose a registry+v1 bundle's namespace from its CSV.
	if reg := View(b, rukpakv1alpha2.ClassRegistry, tagged, "rukpak-system"); reg.Spec.InstallNamespace != "" || reg.Spec.ProvisionerClassName != rukpakv1alpha2.ClassRegistry {
		t.Fatalf("registry view %+v", reg.Spec)
	}
}

func TestSource(t *testing.T) {
	moved := imageSource("registry.example/combo@sha256:old")
	for _, tc := range []struct {
		name   string
		status rukpakv1alpha1.BundleStatus
		step   Step
		pinned *rukpakv1alpha1.BundleSource
		want   rukpakv1alpha1.BundleSource
	}{
		{"a first unpack: the spec's", rukpakv1alpha1.BundleStatus{}, Unpack, nil, tagged},
		{"a refetch: the source the status pinned, never the tag", unpackedStatus(url), Refetch, nil, pinned},
		{"a retry of a failed refetch: the source it was pinned to", rukpakv1alpha1.BundleStatus{Phase: rukpakv1alpha1.PhaseFailing}, Unpack, &moved, moved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Source(bundle(tagged, tc.status), tc.step, tc.pinned); !cmp.Equal(got, tc.want) {
				t.Fatalf("Source = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestWaiting(t *testing.T) {
	unpacking := rukpakv1alpha1.BundleStatus{Phase: rukpakv1alpha1.PhaseUnpacking}
	failing := rukpakv1alpha1.BundleStatus{Phase: rukpakv1alpha1.PhaseFailing}
	for _, tc := range []struct {
		name   string
		status rukpakv1alpha1.BundleStatus
		step   Step
		says   bool
	}{
		{"a first unpack says it runs", rukpakv1alpha1.BundleStatus{}, Unpack, true},
		{"already said", unpacking, Unpack, false},
		{"a retry keeps saying the failure", failing, Unpack, false},
		{"a refetch keeps saying unpacked", unpackedStatus(url), Refetch, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Waiting(bundle(tagged, tc.status), tc.step, "image registry.example/combo:v1")
			if (got != nil) != tc.says {
				t.Fatalf("Waiting = %+v, want an outcome: %v", got, tc.says)
			}
			if got != nil && (got.Phase != Unpacking || got.Source != "image registry.example/combo:v1") {
				t.Fatalf("Waiting = %+v", got)
			}
		})
	}
}

func TestFetchFailed(t *testing.T) {
	next := t0.Add(time.Second)
	for _, tc := range []struct {
		name string
		in   status.Failure
		want Outcome
	}{
		{"the source", status.Failure{Kind: status.SourceFailed, Message: "MANIFEST_UNKNOWN", Retrying: true, NextAttempt: next},
			Outcome{Phase: SourceFailed, Source: "src", Cause: "MANIFEST_UNKNOWN", Retrying: true, NextAttempt: next}},
		{"an upload source", status.Failure{Kind: status.SpecUnsupported, Message: "upload"}, Outcome{Phase: SourceFailed, Source: "src", Cause: "upload"}},
		{"the content", status.Failure{Kind: status.BundleInvalid, Message: "no objects"}, Outcome{Phase: Invalid, Source: "src", Cause: "no objects"}},
		{"the adapter's own", status.Failure{Kind: status.ControllerFailed, Message: "full", Retrying: true, NextAttempt: next},
			Outcome{Phase: Failed, Source: "src", Cause: "full", Retrying: true, NextAttempt: next}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, FetchFailed(tc.in, "src")); d != "" {
				t.Fatalf("FetchFailed (-want +got):\n%s", d)
			}
		})
	}
}
