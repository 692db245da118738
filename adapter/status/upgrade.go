package status

import (
	"fmt"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Channel is what a catalog BundleDeployment's channel publishes, read
// from its Packages, for the UpgradeAvailable condition.
type Channel struct {
	// Installed is the BundleDeployment's own catalog entry: the bundle
	// installed once its generation is; while the generation is held, the
	// entry installed (Hold.Installed).
	Installed catalog.Entry
	// Published are the entries of the channel's Packages.
	Published []catalog.Entry
	// Unreadable says why the Packages could not be read; Published is
	// then empty.
	Unreadable string
	// PackageInstall is the PackageInstall that installs the bundle
	// ("namespace/name").
	PackageInstall string
	// Policy is the install's upgradeConstraintPolicy: SelfCertified moves
	// to any version, without the channel's edges.
	Policy string
	// Approval is the install's upgradeApproval and approvedVersion.
	Approval catalog.Approval
}

// withUpgrade says what the channel offers beyond what is installed, once
// this generation is installed and no walk along the channel is under
// way; until then the condition stays as it was stored, for the version
// that runs. A BundleDeployment of no catalog has none.
func (s state) withUpgrade(c conditions) conditions {
	ch := s.Channel
	if ch == nil {
		c.dropUpgrade = true
		return c
	}
	// A hold says the notice of the version installed, which runs.
	held := c.held != nil && s.Hold.HasInstalled && c.installed.Status == metav1.ConditionTrue
	if !s.BD.DeletionTimestamp.IsZero() || !held && (c.installed.Status != metav1.ConditionTrue || c.installed.ObservedGeneration != s.gen || (s.Walk != nil && !s.Walk.final())) {
		return c
	}
	in := ch.Installed
	var u metav1.Condition
	switch {
	case ch.Unreadable != "" && apimeta.FindStatusCondition(s.BD.Status.Conditions, rukpakv1alpha2.TypeUpgradeAvailable) != nil:
		// What was last read stands: an adapter that starts reads the
		// channel before the cache of the catalogs' Packages has opened,
		// and a notice must not come and go with every restart.
		return c
	case ch.Unreadable != "":
		u = s.condNew(rukpakv1alpha2.TypeUpgradeAvailable, metav1.ConditionUnknown, rukpakv1alpha2.ReasonChannelUnreadable,
			Message(fmt.Sprintf("Whether channel %s offers a version beyond %s, the one installed, is not known: %s", in.Channel, in.Version, ch.Unreadable)))
	default:
		up := catalog.UpgradesFrom(in, ch.Published, ch.Policy)
		switch {
		case up.Available() && !ch.Approval.Covers(up.Target()):
			u = s.condNew(rukpakv1alpha2.TypeUpgradeAvailable, metav1.ConditionTrue, rukpakv1alpha2.ReasonUpgradeAwaitingApproval, upgradeMessage(ch, up))
		case up.Available():
			u = s.condNew(rukpakv1alpha2.TypeUpgradeAvailable, metav1.ConditionTrue, rukpakv1alpha2.ReasonUpgradeAvailable, upgradeMessage(ch, up))
		case !publishes(ch.Published, in):
			u = s.condNew(rukpakv1alpha2.TypeUpgradeAvailable, metav1.ConditionFalse, rukpakv1alpha2.ReasonNotInChannel, notInChannelMessage(ch, up))
		case up.Head.Bundle != in.Bundle:
			u = s.condNew(rukpakv1alpha2.TypeUpgradeAvailable, metav1.ConditionFalse, rukpakv1alpha2.ReasonNoUpgradePath,
				fmt.Sprintf("Channel %s publishes %s, but none of its edges lead there from %s, the version installed: an upgrade waits for a release that replaces or skips %s, or the value upgradeConstraintPolicy: SelfCertified",
					in.Channel, up.Head.Version, in.Version, in.Bundle))
		default:
			u = s.condNew(rukpakv1alpha2.TypeUpgradeAvailable, metav1.ConditionFalse, rukpakv1alpha2.ReasonAtChannelHead,
				fmt.Sprintf("%s, the version installed, is the head of channel %s", in.Version, in.Channel))
		}
	}
	c.upgrade = &u
	return c
}

// publishes says the channel's entries hold in's bundle.
func publishes(published []catalog.Entry, in catalog.Entry) bool {
	for _, e := range published {
		if e.Package == in.Package && e.Bundle == in.Bundle {
			return true
		}
	}
	return false
}

// notInChannelMessage says the channel no longer publishes the version
// installed, what it publishes instead, and how to follow the catalog
// again.
func notInChannelMessage(ch *Channel, up catalog.Upgrades) string {
	in := ch.Installed
	ns, name, _ := strings.Cut(ch.PackageInstall, "/")
	var b strings.Builder
	head, found := catalog.Head(ch.Published, in.Package)
	switch {
	case !found:
		fmt.Fprintf(&b, "Channel %s publishes no version seen from namespace %s: it was renamed, emptied or deleted in its catalog", in.Channel, ns)
	case head.Bundle == up.Head.Bundle:
		fmt.Fprintf(&b, "Channel %s no longer publishes %s, the version installed (it was retracted), and none of its edges lead from it to %s, its head", in.Channel, in.Version, head.Version)
	default:
		// The head is lower than the version installed: the catalog moved
		// back.
		fmt.Fprintf(&b, "Channel %s no longer publishes %s, the version installed (it was retracted); its head is now %s, a lower version", in.Channel, in.Version, head.Version)
	}
	fmt.Fprintf(&b, ". %s keeps running and is offered nothing; to follow the catalog again, find a channel that publishes it (kctrl package available list -n %s) "+
		"and move the install there (kctrl package installed update -n %s -i %s -p <that channel's package> --version <a version it publishes>)", in.Version, ns, ns, name)
	return b.String()
}

// upgradeMessage names the version offered, the path to it and the kctrl
// command that installs it.
func upgradeMessage(ch *Channel, up catalog.Upgrades) string {
	target := up.Target()
	var b strings.Builder
	fmt.Fprintf(&b, "Channel %s offers %s beyond %s, the version installed", ch.Installed.Channel, target.Version, ch.Installed.Version)
	if len(up.Path) > 2 {
		fmt.Fprintf(&b, ", along %s", catalog.Describe(up.Versions()))
	}
	if up.Head.Bundle != target.Bundle {
		fmt.Fprintf(&b, "; its head, %s, is not reachable from %s", up.Head.Version, ch.Installed.Version)
	}
	version := target.PackageVersion()
	if !ch.Approval.Covers(target) {
		fmt.Fprintf(&b, "; it waits for approval (upgradeApproval: %s). See what each hop changes with: %s; approve exactly this version with: %s",
			catalog.ApprovalManual, catalog.PlanCommand(ch.PackageInstall, version), catalog.ApproveCommand(ch.PackageInstall, version))
		return b.String()
	}
	fmt.Fprintf(&b, ". See what each hop changes with: %s; install it with: %s", catalog.PlanCommand(ch.PackageInstall, version), catalog.UpdateCommand(ch.PackageInstall, version))
	return b.String()
}
