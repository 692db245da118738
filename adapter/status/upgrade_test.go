package status

import (
	"strings"
	"testing"
	"time"

	kappctrlv1alpha1 "carvel.dev/kapp-controller/pkg/apis/kappctrl/v1alpha1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// TestCompute_UpgradeAvailable: what a catalog BundleDeployment's channel
// offers is said once its generation is installed, for the version that
// runs; while a generation or a walk is under way the stored notice stays.
func TestCompute_UpgradeAvailable(t *testing.T) {
	t.Parallel()
	entry := func(bundle, version, replaces string) catalog.Entry {
		return catalog.Entry{Package: "prometheus", Channel: "beta", Bundle: bundle, Version: version, Replaces: replaces}
	}
	v1, v101, v2 := entry("p.1.0.0", "1.0.0", ""), entry("p.1.0.1", "1.0.1", "p.1.0.0"), entry("p.2.0.0", "2.0.0+build.7", "p.1.0.1")
	orphan := entry("p.3.0.0", "3.0.0", "")
	channel := func(installed catalog.Entry, published ...catalog.Entry) *Channel {
		return &Channel{Installed: installed, Published: published, PackageInstall: "operators/prom"}
	}
	deployed := newApp(3, 3, kappctrlv1alpha1.ReconcileSucceeded, fetchOK(1, 2))
	deploying := newApp(3, 3, kappctrlv1alpha1.Reconciling, fetchOK(1, 2))
	storedNotice := metav1.Condition{Type: rukpakv1alpha2.TypeUpgradeAvailable, Status: metav1.ConditionTrue, Reason: rukpakv1alpha2.ReasonUpgradeAvailable,
		Message: "Channel beta offers 1.0.1 beyond 1.0.0, the version installed", ObservedGeneration: 1}
	tests := []struct {
		name    string
		app     *kappctrlv1alpha1.App
		channel *Channel
		walk    *Walk
		// unsaid: no notice was stored before.
		unsaid bool
		// status and reason of UpgradeAvailable ("" when it is absent),
		// the words its message holds and its generation.
		status metav1.ConditionStatus
		reason string
		words  []string
		gen    int64
	}{
		{name: "a path to the head", app: deployed, channel: channel(v1, v1, v101, v2),
			status: "True", reason: rukpakv1alpha2.ReasonUpgradeAvailable, gen: 2,
			words: []string{"Channel beta offers 2.0.0+build.7 beyond 1.0.0, the version installed, along 1.0.0 → 1.0.1 → 2.0.0+build.7",
				"rukpak-kapp upgrade plan prom -n operators --to 2.0.0; install it with: kctrl package installed update -n operators -i prom --version 2.0.0"}},
		{name: "one edge", app: deployed, channel: channel(v101, v1, v101, v2),
			status: "True", reason: rukpakv1alpha2.ReasonUpgradeAvailable, gen: 2, words: []string{"offers 2.0.0+build.7 beyond 1.0.1, the version installed. See what each hop changes"}},
		{name: "the head not reachable: the highest version that is", app: deployed, channel: channel(v1, v1, v101, orphan),
			status: "True", reason: rukpakv1alpha2.ReasonUpgradeAvailable, gen: 2, words: []string{"offers 1.0.1", "its head, 3.0.0, is not reachable from 1.0.0"}},
		{name: "at the head", app: deployed, channel: channel(v2, v1, v101, v2),
			status: "False", reason: rukpakv1alpha2.ReasonAtChannelHead, gen: 2, words: []string{"2.0.0+build.7, the version installed, is the head of channel beta"}},
		{name: "a higher version no edge reaches", app: deployed, channel: channel(v1, v1, orphan),
			status: "False", reason: rukpakv1alpha2.ReasonNoUpgradePath, gen: 2, words: []string{"publishes 3.0.0, but none of its edges lead there from 1.0.0", "replaces or skips p.1.0.0"}},
		{name: "the channel emptied, renamed or deleted", app: deployed, channel: channel(v101),
			status: "False", reason: rukpakv1alpha2.ReasonNotInChannel, gen: 2,
			words: []string{"Channel beta publishes no version seen from namespace operators: it was renamed, emptied or deleted in its catalog. 1.0.1 keeps running",
				"kctrl package available list -n operators", "kctrl package installed update -n operators -i prom -p <that channel's package>"}},
		{name: "the version installed retracted, nothing higher reached from it", app: deployed, channel: channel(v101, v1, orphan),
			status: "False", reason: rukpakv1alpha2.ReasonNotInChannel, gen: 2,
			words: []string{"Channel beta no longer publishes 1.0.1, the version installed (it was retracted), and none of its edges lead from it to 3.0.0, its head"}},
		{name: "the version installed retracted, the catalog moved back below it", app: deployed, channel: channel(v2, v1, v101),
			status: "False", reason: rukpakv1alpha2.ReasonNotInChannel, gen: 2,
			words: []string{"Channel beta no longer publishes 2.0.0+build.7, the version installed (it was retracted); its head is now 1.0.1, a lower version"}},
		{name: "the version installed retracted, a higher one reached from it: offered", app: deployed, channel: channel(v101, v1, v2),
			status: "True", reason: rukpakv1alpha2.ReasonUpgradeAvailable, gen: 2, words: []string{"offers 2.0.0+build.7 beyond 1.0.1"}},
		{name: "SelfCertified: the head, edges or not", app: deployed, channel: &Channel{Installed: v1, Published: []catalog.Entry{v1, orphan}, PackageInstall: "operators/prom", Policy: catalog.PolicySelfCertified},
			status: "True", reason: rukpakv1alpha2.ReasonUpgradeAvailable, gen: 2, words: []string{"offers 3.0.0 beyond 1.0.0", "--version 3.0.0"}},
		{name: "Manual: the offer waits for approval", app: deployed, channel: &Channel{Installed: v1, Published: []catalog.Entry{v1, v101, v2}, PackageInstall: "operators/prom",
			Approval: catalog.Approval{Manual: true, Approved: "1.0.1"}},
			status: "True", reason: rukpakv1alpha2.ReasonUpgradeAwaitingApproval, gen: 2,
			words: []string{"offers 2.0.0+build.7 beyond 1.0.0, the version installed, along 1.0.0 → 1.0.1 → 2.0.0+build.7; it waits for approval (upgradeApproval: Manual)",
				"rukpak-kapp upgrade plan prom -n operators --to 2.0.0", `approvedVersion: "2.0.0"`}},
		{name: "Manual, the offer approved: available", app: deployed, channel: &Channel{Installed: v1, Published: []catalog.Entry{v1, v101, v2}, PackageInstall: "operators/prom",
			Approval: catalog.Approval{Manual: true, Approved: "2.0.0"}},
			status: "True", reason: rukpakv1alpha2.ReasonUpgradeAvailable, gen: 2, words: []string{"install it with: kctrl package installed update"}},
		{name: "the channel unreadable, nothing said before", app: deployed, channel: &Channel{Installed: v1, Unreadable: "the packaging API data.packaging.carvel.dev/v1alpha1 is not served", PackageInstall: "operators/prom"},
			unsaid: true, status: "Unknown", reason: rukpakv1alpha2.ReasonChannelUnreadable, gen: 2,
			words: []string{"Whether channel beta offers a version beyond 1.0.0, the one installed, is not known: the packaging API"}},
		{name: "the channel unreadable: what was said stands", app: deployed, channel: &Channel{Installed: v1, Unreadable: "not served yet", PackageInstall: "operators/prom"},
			status: "True", reason: rukpakv1alpha2.ReasonUpgradeAvailable, gen: 1, words: []string{storedNotice.Message}},
		{name: "this generation not installed yet: the notice of the version that runs", app: deploying, channel: channel(v1, v1, v101, v2),
			status: "True", reason: rukpakv1alpha2.ReasonUpgradeAvailable, gen: 1, words: []string{storedNotice.Message}},
		{name: "a walk under way: the notice of the version that runs", app: deployed, channel: channel(v2, v1, v101, v2),
			walk:   &Walk{Channel: "beta", Versions: []string{"1.0.0", "1.0.1", "2.0.0"}, Step: 1},
			status: "True", reason: rukpakv1alpha2.ReasonUpgradeAvailable, gen: 1, words: []string{storedNotice.Message}},
		{name: "no catalog: none", app: deployed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bd := newBD(nil)
			bd.Status.Conditions = installedAt(1, pinnedSource).conds
			if !tt.unsaid {
				bd.Status.Conditions = append(bd.Status.Conditions, storedNotice)
			}
			bd.Status.ObservedGeneration = 1
			out := Compute(Facts{BD: bd, App: tt.app, Channel: tt.channel, Walk: tt.walk, Now: t0.Add(time.Hour), Progress: Progress{BehindSince: t0, Said: true}})
			u := apimeta.FindStatusCondition(out.Status.Conditions, rukpakv1alpha2.TypeUpgradeAvailable)
			if tt.status == "" {
				if u != nil {
					t.Fatalf("UpgradeAvailable %+v on a BundleDeployment of no catalog", u)
				}
				return
			}
			if u == nil || u.Status != tt.status || u.Reason != tt.reason || u.ObservedGeneration != tt.gen {
				t.Fatalf("UpgradeAvailable %+v, want %s %s at generation %d", u, tt.status, tt.reason, tt.gen)
			}
			for _, w := range tt.words {
				if !strings.Contains(u.Message, w) {
					t.Errorf("UpgradeAvailable's message %q lacks %q", u.Message, w)
				}
			}
		})
	}
}
