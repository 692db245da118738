// Package status computes a BundleDeployment's whole status from the facts
// one reconcile gathered: the BundleDeployment with what it stored so far,
// its App, what the adapter fetched and what stopped it, the installed
// objects (judged by kstatus: Healthy) and the clock. It has no
// client, no clock of its own.
//
// The generation rule: every condition carries the generation it describes.
// Installed=True (and Healthy, which describes the installed objects) carry
// the generation kapp-controller deployed; they move to a newer generation
// only once kapp-controller reports that generation's App deployed. What is
// said about a newer generation before that (being fetched, failed, pending)
// carries the newer generation. status.observedGeneration is the Installed
// condition's generation, and resolvedSource describes what is installed.
//
// It owns nothing between calls.
package status
