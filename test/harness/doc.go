// Package harness starts the local control plane that tests and `make run`
// use: etcd, kube-apiserver, kapp-controller (two processes), OCI registries,
// git and file servers and the adapter, all on loopback, from binaries built
// by test/tools. The control plane and kapp-controller's manager run at
// GOGC=400 unless Options.DefaultGC says otherwise; the adapter runs as a
// cluster runs it.
//
// It owns the processes it starts (and stops them in Env.Stop) and may import api/,
// test/harness/podspec, test/catalogtest and, to read or make what the
// adapter does (whether a BundleDeployment is reconciled, an example
// catalog), the client-free packages of adapter/ (translate, catalog, ...; never adapter/fetch, whose
// tests import the harness); it runs the adapter as a binary and never
// imports package adapter.
package harness
