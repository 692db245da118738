// Package bundle unpacks Bundles on their own (rukpak v0.16's Bundle
// API, for Bundles no BundleDeployment generated) and finds the content
// every contentURL serves.
//
// Unpacker is the controller of Bundles on their own: it fetches each one
// itself, with no Pod (store.Materialize through the store's fetcher:
// images with pull secrets and CAs, git with auth, http, ConfigMaps),
// checks it as its class requires, keeps its content in the content store
// and reports rukpak v0.16's status (adapter/controllers/bundle/plan decides). URLSource is
// the contenturl.Source of every replica: what an unpacked Bundle's or
// BundleDeployment's contentURL serves, fetched again from the pinned
// source when the replica does not hold it. Forgetter drops what is stored
// for an object when it is deleted, on every replica.
//
// A reconcile follows the BundleDeployment reconciler's phases: a read that writes nothing
// (load: the Bundle and the plan's step), the steps in order (rukpak's
// finalizer released, then the plan's: rest, report, fetch), and one
// locked status write with its Event (report), skipped when it changes
// nothing.
//
// A fetch runs in a goroutine of its own (fetches.go), stores the content
// it fetched before it lets its slot go, and writes nothing to the API
// server: a reconcile waits for it at most UnpackingAfter, says Unpacking on a
// first unpack when it is not done, and returns; the fetch's end queues the
// Bundle again, and that reconcile writes the outcome. At most MaxFetches
// run at once, the others waiting for a slot; a Bundle that goes, or is
// replaced under its name, cancels its fetch.
//
// It remembers, per Bundle, the source a failed fetch again was pinned to
// (so the retry never fetches a tag that moved), the fetch under way, the
// version its last status write replaced (memo.OwnWrites) and the backoff
// of a fetch that failed (fetch.Backoff).
// adapter.NewManager wires it.
package bundle
