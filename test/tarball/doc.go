// Package tarball makes, for the fast tests, the gzipped tar archives that
// an http source or a file server hands out, from a map of file names to
// contents. It imports only the standard library, so every package's
// tests may use it (adapter/fetch's included).
package tarball
