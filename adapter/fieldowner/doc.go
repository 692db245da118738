// Package fieldowner names the adapter as a writer: every object and
// status it writes carries this field manager (server-side apply's and
// managedFields' name for it), and its Events this source. One name
// everywhere is what lets a take-over, a hand-back or a user's
// `kubectl get -o yaml --show-managed-fields` tell the adapter's fields
// from everyone else's. drift's re-apply kicks are the one exception:
// they write as drift.KickManager, so a kick is never mistaken for the
// adapter's own App.
//
// It owns nothing; every package of the adapter may import it.
package fieldowner

// Name is the adapter's field manager and Event source.
const Name = "rukpak-kapp"
