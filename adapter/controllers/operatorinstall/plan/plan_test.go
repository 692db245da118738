package plan

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	catalogsv1alpha1 "github.com/rukpak-kapp/rukpak-kapp/api/catalogs/v1alpha1"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

var now = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

// channel is stable of efs: 1.0.0 ← 1.1.0 ← 1.2.0 ← 2.0.0 by replaces, and
// 1.1.1 replacing 1.0.0 too.
func channel() []catalog.Node {
	n := func(v, replaces string) catalog.Node {
		e := catalog.Entry{Package: "efs", Channel: "stable", Bundle: "efs.v" + v, Version: v, RefName: "stable.efs.example.com"}
		if replaces != "" {
			e.Replaces = "efs.v" + replaces
		}
		return catalog.Node{Entry: e, Image: "reg/efs:" + v}
	}
	return []catalog.Node{n("1.0.0", ""), n("1.1.0", "1.0.0"), n("1.2.0", "1.1.0"), n("2.0.0", "1.2.0"), n("1.1.1", "1.0.0")}
}

func install(version string, mut ...func(*catalogsv1alpha1.OperatorInstall)) *catalogsv1alpha1.OperatorInstall {
	oi := &catalogsv1alpha1.OperatorInstall{ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "efs", Generation: 3},
		Spec: catalogsv1alpha1.OperatorInstallSpec{PackageName: "efs", Channel: "stable", RefName: "stable.efs.example.com", Version: version, Bundle: "efs.v" + version,
			Image: "reg/efs:" + version, InstallNamespace: "efs-op", UpgradeConstraintPolicy: catalogsv1alpha1.PolicyCatalogProvided, UpgradeApproval: catalogsv1alpha1.ApprovalAutomatic}}
	for _, m := range mut {
		m(oi)
	}
	return oi
}

func installed(v string) func(*catalogsv1alpha1.OperatorInstall) {
	return func(oi *catalogsv1alpha1.OperatorInstall) {
		oi.Status.Installed = &catalogsv1alpha1.BundleVersion{Bundle: "efs.v" + v, Version: v}
	}
}

func walking(step int, started time.Time, path ...string) func(*catalogsv1alpha1.OperatorInstall) {
	return func(oi *catalogsv1alpha1.OperatorInstall) {
		t := metav1.NewTime(started)
		oi.Status.Walk = &catalogsv1alpha1.WalkStatus{Path: path, Step: int32(step), StepStarted: &t}
	}
}

func manual(approved string) func(*catalogsv1alpha1.OperatorInstall) {
	return func(oi *catalogsv1alpha1.OperatorInstall) {
		oi.Spec.UpgradeApproval, oi.Spec.ApprovedVersion = catalogsv1alpha1.ApprovalManual, approved
	}
}

// bd is the install's BundleDeployment at version v, written from
// generation gen of the install, with conditions.
func bd(v string, gen int64, conds ...metav1.Condition) *rukpakv1alpha2.BundleDeployment {
	oi := install(v)
	oi.Generation = gen
	out := BundleDeployment(oi, Step{Entry: catalog.Entry{Package: "efs", Channel: "stable", Bundle: "efs.v" + v, Version: v}, Image: "reg/efs:" + v})
	out.Generation = 7
	out.Status.Conditions = conds
	return out
}

func cond(t, status, reason string, gen int64) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: reason, Message: t + " " + reason, ObservedGeneration: gen}
}

var (
	deployed   = cond(rukpakv1alpha2.TypeInstalled, "True", rukpakv1alpha2.ReasonInstallationSucceeded, 7)
	deploying  = cond(rukpakv1alpha2.TypeInstalled, "True", rukpakv1alpha2.ReasonInstallationSucceeded, 6)
	failed     = cond(rukpakv1alpha2.TypeInstalled, "False", rukpakv1alpha2.ReasonUpgradeFailed, 7)
	healthy    = cond(rukpakv1alpha2.TypeHealthy, "True", rukpakv1alpha2.ReasonHealthy, 7)
	inProgress = cond(rukpakv1alpha2.TypeHealthy, "False", rukpakv1alpha2.ReasonUnhealthy, 7)
	objFailed  = cond(rukpakv1alpha2.TypeHealthy, "False", rukpakv1alpha2.ReasonObjectFailed, 7)
	unjudged   = cond(rukpakv1alpha2.TypeHealthy, "Unknown", rukpakv1alpha2.ReasonHealthUnknown, 7)
)

// want is what a look decides and says.
type want struct {
	// target is the version the BundleDeployment installs after the look
	// ("" none); moves says it is another than it names.
	target string
	moves  bool
	// installed and asked are the versions the status names.
	installed, asked string
	// walk is the path and the step ("" no walk).
	walk, step string
	// installedCond etc. are "status reason" at the install's generation
	// (3), or "kept" for a stored one left as it was; "" not set.
	installedCond, progressing, held, upgrade string
	// words are in Installed's, Progressing's or Held's message.
	words string
}

func TestDecideAndStatus(t *testing.T) {
	t.Parallel()
	stored := func(c metav1.Condition) func(*catalogsv1alpha1.OperatorInstall) {
		return func(oi *catalogsv1alpha1.OperatorInstall) { oi.Status.Conditions = append(oi.Status.Conditions, c) }
	}
	installedBefore := stored(metav1.Condition{Type: catalogsv1alpha1.TypeInstalled, Status: metav1.ConditionTrue, Reason: catalogsv1alpha1.ReasonInstallationSucceeded,
		Message: "1.0.0 is installed", ObservedGeneration: 2})
	withPicked := func(f *Facts) { f.Picked = "1.1.1" }
	without := func(versions ...string) func(*Facts) {
		return func(f *Facts) {
			var kept []catalog.Node
			for _, n := range f.Channel {
				if !strings.Contains(strings.Join(versions, ","), n.Entry.Version) {
					kept = append(kept, n)
				}
			}
			f.Channel = kept
		}
	}
	retracting := func(v string) func(*Facts) {
		return func(f *Facts) {
			without(v)(f)
			f.Retracted = map[string]string{"efs.v" + v: "reg/catalog@sha256:2"}
		}
	}
	walkPath := "1.0.0 → 1.1.0 → 1.2.0 → 2.0.0"
	started := now.Add(-time.Minute)
	for _, tc := range []struct {
		name  string
		oi    *catalogsv1alpha1.OperatorInstall
		bd    *rukpakv1alpha2.BundleDeployment
		facts func(*Facts)
		want  want
	}{
		{name: "a first install: the BundleDeployment is written", oi: install("1.0.0"),
			want: want{target: "1.0.0", moves: true, asked: "1.0.0", installedCond: "Unknown Installing", words: "Writing BundleDeployment efs.ops to install efs 1.0.0"}},
		{name: "a first install deployed", oi: install("1.0.0"), bd: bd("1.0.0", 3, deployed, healthy),
			want: want{target: "1.0.0", installed: "1.0.0", asked: "1.0.0", installedCond: "True InstallationSucceeded", upgrade: "True UpgradeAvailable",
				words: "efs 1.0.0 is installed (BundleDeployment efs.ops: Installed InstallationSucceeded)"}},
		{name: "values changed: the BundleDeployment of the version installed is written again", oi: install("2.0.0", installed("2.0.0"), installedBefore), bd: bd("2.0.0", 2, deployed),
			want: want{target: "2.0.0", installed: "2.0.0", asked: "2.0.0", installedCond: "kept"}},
		{name: "one edge", oi: install("1.1.0", installed("1.0.0"), installedBefore), bd: bd("1.0.0", 2, deployed),
			want: want{target: "1.1.0", moves: true, installed: "1.0.0", asked: "1.1.0", installedCond: "kept"}},
		{name: "three edges: the first step", oi: install("2.0.0", installed("1.0.0"), installedBefore), bd: bd("1.0.0", 2, deployed),
			want: want{target: "1.1.0", moves: true, installed: "1.0.0", asked: "2.0.0", walk: walkPath, step: "1.1.0", installedCond: "kept",
				progressing: "True Upgrading", words: walkPath + ": installing 1.1.0 (1.0.0 is installed)"}},
		{name: "the step under way stays the step", oi: install("2.0.0", installed("1.0.0"), walking(1, started, "1.0.0", "1.1.0", "1.2.0", "2.0.0"), installedBefore),
			bd:   bd("1.1.0", 3, deploying),
			want: want{target: "1.1.0", installed: "1.0.0", asked: "2.0.0", walk: walkPath, step: "1.1.0", installedCond: "kept", progressing: "True Upgrading"}},
		{name: "the step deployed and healthy: the next", oi: install("2.0.0", installed("1.0.0"), walking(1, started, "1.0.0", "1.1.0", "1.2.0", "2.0.0"), installedBefore),
			bd:   bd("1.1.0", 3, deployed, healthy),
			want: want{target: "1.2.0", moves: true, installed: "1.1.0", asked: "2.0.0", walk: walkPath, step: "1.2.0", installedCond: "kept", progressing: "True Upgrading", words: "installing 1.2.0 (1.1.0 is installed)"}},
		{name: "what cannot be judged never holds a walk", oi: install("2.0.0", installed("1.0.0"), walking(1, started, "1.0.0", "1.1.0", "1.2.0", "2.0.0"), installedBefore),
			bd:   bd("1.1.0", 3, deployed, unjudged),
			want: want{target: "1.2.0", moves: true, installed: "1.1.0", asked: "2.0.0", walk: walkPath, step: "1.2.0", installedCond: "kept", progressing: "True Upgrading"}},
		{name: "the step deployed, its objects in progress: the walk waits, with its bound", oi: install("2.0.0", installed("1.0.0"), walking(1, started, "1.0.0", "1.1.0", "1.2.0", "2.0.0"), installedBefore),
			bd: bd("1.1.0", 3, deployed, inProgress),
			want: want{target: "1.1.0", installed: "1.0.0", asked: "2.0.0", walk: walkPath, step: "1.1.0", installedCond: "kept", progressing: "True Upgrading",
				words: "1.1.0 is deployed and the next step waits, until 2026-12-07T12:04:00Z at most, for its installed objects to be Current (1.0.0 is installed): Healthy Unhealthy"}},
		{name: "the step's object Failed: the walk stops there", oi: install("2.0.0", installed("1.0.0"), walking(1, started, "1.0.0", "1.1.0", "1.2.0", "2.0.0"), installedBefore),
			bd: bd("1.1.0", 3, deployed, objFailed),
			want: want{target: "1.1.0", installed: "1.0.0", asked: "2.0.0", walk: walkPath, step: "1.1.0", installedCond: "False UpgradeFailed", progressing: "False UpgradeStopped",
				words: "The upgrade along channel stable (" + walkPath + ") stopped at 1.1.0; 1.0.0 stays installed: 1.1.0 is deployed, and its installed objects are not healthy: Healthy ObjectFailed"}},
		{name: "the step's objects still in progress past the bound: the walk stops", oi: install("2.0.0", installed("1.0.0"), walking(1, now.Add(-6*time.Minute), "1.0.0", "1.1.0", "1.2.0", "2.0.0"), installedBefore),
			bd:   bd("1.1.0", 3, deployed, inProgress),
			want: want{target: "1.1.0", installed: "1.0.0", asked: "2.0.0", walk: walkPath, step: "1.1.0", installedCond: "False UpgradeFailed", progressing: "False UpgradeStopped", words: "still after 5m0s"}},
		{name: "a step that failed stops the walk", oi: install("2.0.0", installed("1.1.0"), walking(2, started, "1.0.0", "1.1.0", "1.2.0", "2.0.0"), installedBefore),
			bd: bd("1.2.0", 3, failed),
			want: want{target: "1.2.0", installed: "1.1.0", asked: "2.0.0", walk: walkPath, step: "1.2.0", installedCond: "False UpgradeFailed", progressing: "False UpgradeStopped",
				words: "stopped at 1.2.0; 1.1.0 stays installed: Installed UpgradeFailed"}},
		{name: "the last step, the path kept", oi: install("2.0.0", installed("1.2.0"), walking(3, started, "1.0.0", "1.1.0", "1.2.0", "2.0.0"), installedBefore),
			bd:   bd("2.0.0", 3, deploying),
			want: want{target: "2.0.0", installed: "1.2.0", asked: "2.0.0", walk: walkPath, step: "2.0.0", installedCond: "kept", progressing: "True Upgrading"}},
		{name: "the walk's end: Installed names the path", oi: install("2.0.0", installed("1.2.0"), walking(3, started, "1.0.0", "1.1.0", "1.2.0", "2.0.0"), installedBefore),
			bd: bd("2.0.0", 3, deployed, healthy),
			want: want{target: "2.0.0", installed: "2.0.0", asked: "2.0.0", walk: walkPath, step: "2.0.0", installedCond: "True InstallationSucceeded", upgrade: "False AtChannelHead",
				words: "upgraded along channel stable one edge at a time: " + walkPath}},
		{name: "asked for another version mid-walk: walked to from what is installed", oi: install("1.1.1", installed("1.0.0"), walking(1, started, "1.0.0", "1.1.0", "1.2.0", "2.0.0"), installedBefore),
			bd:   bd("1.1.0", 2, deploying),
			want: want{target: "1.1.1", moves: true, installed: "1.0.0", asked: "1.1.1", installedCond: "kept"}},
		{name: "no path back: refused, nothing changed", oi: install("1.1.0", installed("2.0.0"), installedBefore), bd: bd("2.0.0", 2, deployed),
			want: want{target: "2.0.0", installed: "2.0.0", asked: "1.1.0", installedCond: "False UpgradeRefused",
				words: "upgrade of efs refused: version 2.0.0 is installed and 1.1.0 was asked for"}},
		{name: "SelfCertified moves at once", oi: install("2.0.0", installed("1.0.0"), installedBefore, func(oi *catalogsv1alpha1.OperatorInstall) {
			oi.Spec.UpgradeConstraintPolicy = catalogsv1alpha1.PolicySelfCertified
		}), bd: bd("1.0.0", 2, deployed),
			want: want{target: "2.0.0", moves: true, installed: "1.0.0", asked: "2.0.0", installedCond: "kept"}},
		{name: "Manual, not approved: held, the version installed with this generation's values", oi: install("2.0.0", installed("1.0.0"), installedBefore, manual("")),
			bd:   bd("1.0.0", 2, deployed),
			want: want{target: "1.0.0", installed: "1.0.0", asked: "2.0.0", installedCond: "kept"}},
		{name: "Manual, not approved, the values deployed: Held", oi: install("2.0.0", installed("1.0.0"), installedBefore, manual("")),
			bd: bd("1.0.0", 3, deployed),
			want: want{target: "1.0.0", installed: "1.0.0", asked: "2.0.0", installedCond: "kept", held: "True AwaitingApproval", upgrade: "True UpgradeAwaitingApproval",
				words: "upgrade of efs held: 2.0.0 waits for approval (upgradeApproval: Manual), and 1.0.0 stays installed"}},
		{name: "Manual, approved in the spec: walked", oi: install("2.0.0", installed("1.0.0"), installedBefore, manual("2.0.0")), bd: bd("1.0.0", 2, deployed),
			want: want{target: "1.1.0", moves: true, installed: "1.0.0", asked: "2.0.0", walk: walkPath, step: "1.1.0", installedCond: "kept", progressing: "True Upgrading"}},
		{name: "Manual, the BundleDeployment annotated by hand: not the spec, no approval", oi: install("2.0.0", installed("1.0.0"), installedBefore, manual("")),
			bd: func() *rukpakv1alpha2.BundleDeployment {
				b := bd("1.0.0", 3, deployed)
				b.Annotations[catalog.AnnotationApprovedVersion] = "2.0.0"
				return b
			}(),
			want: want{target: "1.0.0", installed: "1.0.0", asked: "2.0.0", installedCond: "kept", held: "True AwaitingApproval"}},
		{name: "Manual, a first install: nothing written, Held", oi: install("2.0.0", manual("")),
			want: want{asked: "2.0.0", installedCond: "Unknown Installing", held: "True AwaitingApproval", words: "Nothing is installed until then"}},
		{name: "the pick retracted, kept for another install: held", oi: install("2.0.0", installed("1.2.0"), installedBefore), bd: bd("1.2.0", 2, deployed), facts: retracting("2.0.0"),
			want: want{target: "1.2.0", installed: "1.2.0", asked: "2.0.0", installedCond: "kept"}},
		{name: "the pick withdrawn in the same moment, kapp-controller's pick now another: the install moves there",
			oi: install("2.0.0", installed("1.0.0"), installedBefore), bd: bd("1.0.0", 2, deployed), facts: func(f *Facts) { without("2.0.0")(f); withPicked(f) },
			want: want{target: "1.1.1", moves: true, installed: "1.0.0", asked: "1.1.1", installedCond: "kept"}},
		{name: "the pick withdrawn and followed: installed at kapp-controller's new pick",
			oi: install("2.0.0", installed("1.0.0"), installedBefore), bd: bd("1.1.1", 3, deployed, healthy), facts: func(f *Facts) { without("2.0.0")(f); withPicked(f) },
			want: want{target: "1.1.1", installed: "1.1.1", asked: "1.1.1", installedCond: "True InstallationSucceeded",
				words: "kapp-controller picked 2.0.0, which channel stable no longer publishes; its pick now is 1.1.1"}},
		{name: "the pick not in the channel, kapp-controller has not picked again: waits, no outcome", oi: install("2.0.0", installed("1.0.0"), installedBefore), bd: bd("1.0.0", 2, deployed),
			facts: without("2.0.0"), want: want{target: "1.0.0", installed: "1.0.0", installedCond: "kept"}},
		{name: "a held install whose running version was withdrawn: kept as the BundleDeployment names it, the values land",
			oi: install("2.0.0", installed("1.0.0"), installedBefore, manual("")), bd: bd("1.0.0", 2, deployed), facts: without("1.0.0"),
			want: want{target: "1.0.0", installed: "1.0.0", asked: "2.0.0", installedCond: "kept"}},
		{name: "the version that runs and is asked for withdrawn from the channel: it stays, and the notice says so",
			oi: install("2.0.0", installed("2.0.0"), installedBefore), bd: bd("2.0.0", 3, deployed, healthy), facts: without("2.0.0"),
			want: want{target: "2.0.0", installed: "2.0.0", asked: "2.0.0", installedCond: "True InstallationSucceeded", upgrade: "False NotInChannel"}},
		{name: "the version that runs and is asked for retracted, kept for it: it stays",
			oi: install("2.0.0", installed("2.0.0"), installedBefore), bd: bd("2.0.0", 3, deployed, healthy), facts: retracting("2.0.0"),
			want: want{target: "2.0.0", installed: "2.0.0", asked: "2.0.0", installedCond: "True InstallationSucceeded", upgrade: "False NotInChannel"}},
		{name: "the channel unreadable: values land, a move waits", oi: install("1.1.0", installed("1.0.0"), installedBefore), bd: bd("1.0.0", 2, deployed),
			facts: func(f *Facts) { f.Channel, f.ChannelErr = nil, errors.New("the packaging API is not served") },
			want:  want{target: "1.0.0", installed: "1.0.0", asked: "1.1.0", installedCond: "kept"}},
		{name: "the channel unreadable, a first install waits", oi: install("1.0.0"), facts: func(f *Facts) { f.Channel, f.ChannelErr = nil, errors.New("down") },
			want: want{asked: "1.0.0", installedCond: "Unknown ChannelUnreadable", words: "Installing 1.0.0 needs channel stable"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := Facts{Install: tc.oi, BD: tc.bd, Channel: channel(), StepTimeout: 5 * time.Minute, Now: now}
			if tc.facts != nil {
				tc.facts(&f)
			}
			p := Decide(f)
			got := want{moves: p.Moves}
			if p.Target != nil {
				got.target = p.Target.Entry.Version
			}
			if p.Installed != nil {
				got.installed = p.Installed.Version
			}
			if p.Asked != nil {
				got.asked = p.Asked.Version
			}
			if p.Walk != nil {
				got.walk, got.step = catalog.Describe(p.Walk.Path), p.Walk.Path[p.Walk.Step]
			}
			st := Status(f, p, Outcome{})
			var msgs []string
			for _, c := range []struct {
				t   string
				out *string
			}{{catalogsv1alpha1.TypeInstalled, &got.installedCond}, {catalogsv1alpha1.TypeProgressing, &got.progressing}, {catalogsv1alpha1.TypeHeld, &got.held},
				{catalogsv1alpha1.TypeUpgradeAvailable, &got.upgrade}} {
				cd := apimeta.FindStatusCondition(st.Conditions, c.t)
				switch {
				case cd == nil:
				case cd.ObservedGeneration != 3:
					*c.out = "kept"
				default:
					*c.out = fmt.Sprintf("%s %s", cd.Status, cd.Reason)
					msgs = append(msgs, cd.Message)
				}
			}
			if !strings.Contains(strings.Join(msgs, "\n"), tc.want.words) {
				t.Errorf("messages %q, want %q in one", msgs, tc.want.words)
			}
			got.words = tc.want.words
			if tc.want.upgrade == "" {
				got.upgrade = ""
			}
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			if st.ObservedGeneration != 3 || st.BundleDeployment != "efs.ops" {
				t.Errorf("status observedGeneration %d, bundleDeployment %q", st.ObservedGeneration, st.BundleDeployment)
			}
		})
	}
}

// What the install writes is an ordinary BundleDeployment: the step's
// image, the install's values, the install and its generation named, and
// nothing of the catalog's approval or edges.
func TestBundleDeployment(t *testing.T) {
	t.Parallel()
	oi := install("2.0.0", func(oi *catalogsv1alpha1.OperatorInstall) {
		oi.Spec.WatchNamespaces = []string{"team"}
		oi.Spec.HealthExpressions = "- kind: X"
		oi.Spec.UpgradeApproval = catalogsv1alpha1.ApprovalManual
	})
	got := BundleDeployment(oi, Step{Entry: catalog.Entry{Package: "efs", Channel: "stable", Bundle: "efs.v1.1.0", Version: "1.1.0", Replaces: "efs.v1.0.0"}, Image: "reg/efs:1.1.0", Lock: "{}"})
	if got.Name != "efs.ops" || got.Spec.Source.Image.Ref != "reg/efs:1.1.0" || got.Spec.InstallNamespace != "efs-op" || got.Spec.ProvisionerClassName != rukpakv1alpha2.ClassRegistry ||
		string(got.Spec.Config.Raw) != `{"watchNamespaces":["team"]}` {
		t.Errorf("spec %+v", got.Spec)
	}
	for k, v := range map[string]string{catalog.AnnotationOperatorInstall: "ops/efs", catalog.AnnotationOperatorInstallGeneration: "3", catalog.AnnotationBundle: "efs.v1.1.0",
		rukpakv1alpha2.AnnotationHealthExpressions: "- kind: X", rukpakv1alpha2.AnnotationInstallWith: "app"} {
		if got.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, got.Annotations[k], v)
		}
	}
	for _, k := range []string{catalog.AnnotationUpgradeApproval, catalog.AnnotationReplaces, catalog.AnnotationPackagesNS} {
		if _, ok := got.Annotations[k]; ok {
			t.Errorf("annotation %s set: the install's own", k)
		}
	}
	oi.Spec.Format, oi.Spec.BundleDeploymentName = catalogsv1alpha1.FormatPlainV0, "mine"
	if plain := BundleDeployment(oi, Step{Image: "i"}); plain.Spec.ProvisionerClassName != rukpakv1alpha2.ClassPlain || plain.Spec.Config != nil || plain.Name != "mine" {
		t.Errorf("plain: %+v", plain)
	}
}

// A BundleDeployment is the install's when it names it; one a catalog
// Package's template made for its PackageInstall is adopted; any other is
// left alone.
func TestOwnerOf(t *testing.T) {
	t.Parallel()
	oi := install("1.0.0")
	legacy := &rukpakv1alpha2.BundleDeployment{ObjectMeta: metav1.ObjectMeta{Name: "efs.ops", Labels: map[string]string{catalog.LabelPackage: "efs", "kapp.k14s.io/app": "1"},
		Annotations: map[string]string{catalog.AnnotationPackagesNS: "ops", catalog.AnnotationInstall: "efs", catalog.AnnotationUpgradeApproval: "Manual", catalog.AnnotationBundle: "efs.v1.0.0"}}}
	other := legacy.DeepCopy()
	other.Annotations[catalog.AnnotationInstall] = "another"
	for _, tc := range []struct {
		bd   *rukpakv1alpha2.BundleDeployment
		want Owner
	}{{nil, Absent}, {bd("1.0.0", 1), Owned}, {legacy, Adoptable}, {other, Foreign}, {&rukpakv1alpha2.BundleDeployment{}, Foreign}} {
		if got := OwnerOf(oi, tc.bd); got != tc.want {
			t.Errorf("OwnerOf(%v) = %v, want %v", tc.bd, got, tc.want)
		}
	}
	patch := string(Adoption(oi, legacy))
	for _, want := range []string{`"catalog.rukpak-kapp.dev/operator-install":"ops/efs"`, `"catalog.rukpak-kapp.dev/upgrade-approval":null`, `"kapp.k14s.io/app":null`} {
		if !strings.Contains(patch, want) {
			t.Errorf("adoption %s lacks %s", patch, want)
		}
	}
	if strings.Contains(patch, "bundle\":null") || strings.Contains(patch, "spec") {
		t.Errorf("adoption %s changes what the BundleDeployment installs", patch)
	}
}
