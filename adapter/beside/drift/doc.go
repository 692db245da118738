// Package drift repairs what a BundleDeployment installed when someone
// deletes it or changes it by hand, within seconds instead of at the App's
// sync period: it watches the installed objects (metadata only, selected by
// the owner labels kapp puts on every one), and when one is deleted or
// changed by a writer other than kapp it has kapp-controller re-apply the
// App at once, coalescing bursts and backing off from a writer that keeps
// changing the object back.
//
// It owns the watches and queues of the repair, and the memory of what it watches per App.
//
// May import (this module): adapter/pure/status, api/v1alpha2.
package drift
