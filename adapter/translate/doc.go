// Package translate turns a BundleDeployment into the kapp-controller App
// that installs it. It is pure: no client, no clock.
//
// It owns nothing between calls and may import adapter/bundlefiles, convert and api/.
package translate
