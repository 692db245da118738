// Package fetch fetches bundle content that kapp-controller cannot fetch by
// itself, such as images behind a per-BundleDeployment CA. It knows about
// registries and archives, not about conditions.
//
// It owns the digest cache of images (DigestCache), and how servers are
// reached beyond what a source says (Network: kapp-controller-config's CAs,
// proxies and hosts not verified, parsed as kapp-controller parses them),
// the transports every fetch of one network setting shares (bounding the
// connections to a server), and when a failed fetch may run again
// (Backoff, RetryDelay: the schedule every controller that fetches keeps).
// A catalog image is streamed, not held: its catalog files are read into a
// file on disk, indexed by package (CatalogSpool), so a catalog of any
// size is published a package at a time.
package fetch
