// Package harness starts the local control plane that tests and `make run`
// use: etcd, kube-apiserver, kapp-controller (two processes), OCI registries
// and the adapter, all on loopback, from binaries built by test/tools.
//
// It owns the processes it starts (and stops them in Env.Stop) and may import api/ and
// test/harness/podspec; it runs the adapter as a binary, never imports it.
package harness
