// Package translate turns a BundleDeployment into the kapp-controller App
// that installs it. It is pure: no client, no clock.
//
// It owns nothing between calls.
//
// May import (this module): adapter/bundlefiles, api/v1alpha2, convert.
package translate
