// Package translate turns a BundleDeployment into the kapp-controller App
// that installs it. It has no client and no clock.
//
// It owns nothing between calls.
package translate
