// Package bundlefiles decides which bundles the adapter fetches itself and lays
// their files out for the App: a plain bundle's manifests, a helm chart with
// its values, a registry+v1 bundle converted to plain objects, its operator's
// images run from a relocated copy of its package repository when the
// BundleDeployment carries the images lock of a `catalog push`
// (relocation.go). It needs no cluster:
// fetched files in, the files the content Secrets hold out.
//
// It owns nothing between calls.
package bundlefiles
