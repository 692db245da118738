// Package drift repairs what a BundleDeployment installed when someone
// deletes it or changes it by hand, within seconds instead of at the App's
// sync period: it watches the installed objects (metadata only, selected by
// the owner labels kapp puts on every one), and when one is deleted or
// changed by a writer other than kapp it has kapp-controller re-apply the
// App at once, coalescing bursts and backing off from a writer that keeps
// changing the object back. Its stall repair (StallRepair) has
// kapp-controller run again an App whose run it lost (killed in the middle
// of it, or its write of the run's progress failed), with the same kick.
//
// It owns the watches and queues of both repairs, and their memory per App
// (dropped when the App is deleted).
package drift
