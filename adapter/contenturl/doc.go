// Package contenturl serves what a Bundle or a BundleDeployment was
// unpacked from at its status.contentURL, as rukpak did: a gzipped tarball
// at <address>/bundles/<name>.tgz (a BundleDeployment's at
// <address>/bundles/bundledeployments/<name>.tgz, so the two kinds never
// share a path and rukpak's bundle-reader ClusterRole covers both), over
// HTTPS on the adapter's webhook server, on every replica. A request
// carries a bearer token; the API server says whose it is (TokenReview)
// and whether that user may get the path, a non-resource URL
// (SubjectAccessReview), as rukpak's kube-rbac-proxy asked it.
//
// The tarballs are kept on local disk (Tarballs), one per object, named by
// its UID and by what the content was made from, within a byte cap: what
// a replica's unpack made is kept until the object goes; what a request
// made a replica fetch again may be dropped, least recently served first,
// to make room. Where the content comes from is the Source's business
// (adapter/controllers/bundle): this package knows tarballs, paths and
// reviews, not registries.
//
// It owns the tarballs' index and files. It words a failure as a condition
// would (adapter/status); its tarballs are ocibundle's layers.
package contenturl
