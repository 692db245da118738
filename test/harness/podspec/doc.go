// Package podspec is what the harness hands the podsandbox helper: a
// container to run from an unpacked image, as a kubelet would run it.
//
// It imports nothing of the module.
package podspec
