// Command scale installs N small plain bundles with rukpak-kapp (adapter and
// kapp-controller), with rukpak v0.24.0's own provisioners, and as Apps
// written directly (the floor, with a kapp-controller of its own), side by
// side on the same local control plane: the installs one after the other,
// then one idle window for all, then one change each. With -alone each
// system gets a fresh control plane of its own instead, one after the
// other. It prints what each cost, what each install added to the store
// (objects and bytes by kind, per object installed). -standalone measures Bundles on their
// own instead, -catalog N the publication of a catalog of N bundles by an
// OperatorCatalog (-catalog-packages P over P packages, -catalog-base M on
// a base layer of M MiB; then the tag moved with one package changed),
// -failing what N failing objects of every kind and
// source cost the servers they fail against (requests and connections per
// minute). See docs/benchmarks.md.
//
// It may import adapter/translate, adapter/fetch (the catalog image
// label), api/, test/catalogtest and test/harness.
package main
