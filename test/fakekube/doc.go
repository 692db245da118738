// Package fakekube is the fake cluster of the adapter's fast unit tests:
// controller-runtime's fake client over the kinds the adapter reads and
// writes, with every call recorded in order (which writes happened, and
// which reads went through which reader), and a hook to fail a call; and
// Offline, the content store's fetcher where nothing may be fetched.
//
// It is for tests of one part's decisions only; the suites under test/ run
// the same parts against a real API server.
//
// It owns the calls it records and may import adapter/fetch and api/; the packages under
// adapter/ import it in their tests only.
package fakekube
