package status

import (
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rukpak-kapp/rukpak-kapp/adapter/catalog"
	rukpakv1alpha2 "github.com/rukpak-kapp/rukpak-kapp/api/v1alpha2"
)

// Hold is set when the version a catalog BundleDeployment's generation asks
// for is held (catalog.Held): no approval covers it, or its catalog
// retracted it.
type Hold struct {
	// Reason is Held's: ReasonAwaitingApproval or ReasonRetracted.
	Reason string
	// Message says why and what to do (catalog.Held's error).
	Message string
	// Installed is the catalog entry the App installed last;
	// HasInstalled is false when nothing is installed yet.
	Installed    catalog.Entry
	HasInstalled bool
	// KeepApp says the App is left as it is (nothing installed yet, or the
	// version installed cannot be read from its channel); otherwise the
	// App installs the version installed with the generation's other
	// fields.
	KeepApp bool
}

// message is Held's message: why, what to do, and what runs meanwhile.
func (h *Hold) message() string {
	switch {
	case !h.HasInstalled:
		return Message(h.Message + ". Nothing is installed until then")
	case h.KeepApp:
		return Message(fmt.Sprintf("%s. %s runs as it was installed; this generation's other fields wait as well, since its Package cannot be read from the channel", h.Message, h.Installed.Version))
	default:
		return Message(fmt.Sprintf("%s. %s runs, with this generation's other fields", h.Message, h.Installed.Version))
	}
}

// withHold says a hold. While held, Installed keeps describing the
// generation last installed (a held generation is never reported
// installed), and Held=True describes this one once what it leaves running
// is in place: at once when the App is left as it is, once the App
// deployed the version installed with this generation's other fields
// otherwise. A failure of that deploy is said as any other (the values
// broke the version installed), and no Held is said then.
func (s state) withHold(c conditions) conditions {
	h := s.Hold
	if h == nil || !s.BD.DeletionTimestamp.IsZero() {
		return c
	}
	if !h.KeepApp {
		deployed := c.installed.Status == metav1.ConditionTrue && c.installed.ObservedGeneration == s.gen
		if !deployed {
			return c
		}
		c.installed = s.storedOr(rukpakv1alpha2.TypeInstalled, c.installed)
	} else {
		installed := s.storedOr(rukpakv1alpha2.TypeInstalled, s.condNew(rukpakv1alpha2.TypeInstalled, metav1.ConditionUnknown, rukpakv1alpha2.ReasonInstallPending,
			"Nothing is installed: the version asked for is held"))
		c = conditions{unpacked: s.storedOr(rukpakv1alpha2.TypeUnpacked, s.condNew(rukpakv1alpha2.TypeUnpacked, metav1.ConditionUnknown, rukpakv1alpha2.ReasonUnpackPending,
			"Nothing is unpacked: the version asked for is held")), installed: installed, resolved: s.BD.Status.ResolvedSource}
	}
	c.healthy = s.healthyFor(c.installed)
	if stored := apimeta.FindStatusCondition(s.BD.Status.Conditions, rukpakv1alpha2.TypeHealthy); stored != nil && stored.ObservedGeneration == c.installed.ObservedGeneration {
		c.healthy = *stored
	}
	c.progressing = nil
	held := s.condNew(rukpakv1alpha2.TypeHeld, metav1.ConditionTrue, h.Reason, h.message())
	c.held = &held
	return c
}

// storedOr is the stored condition of type t, or fallback when there is
// none.
func (s state) storedOr(t string, fallback metav1.Condition) metav1.Condition {
	if c := apimeta.FindStatusCondition(s.BD.Status.Conditions, t); c != nil {
		return *c
	}
	return fallback
}
