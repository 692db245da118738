// Package unpack holds a bundle's file tree, the limits on it and the
// extraction of a tar stream into it: what every source's fetch shares.
// It imports only the standard library, so that its fuzz target's
// instrumented build (make fuzz) compiles this package and nothing else.
//
// It owns no state; adapter/fetch is its one importer and names its types
// for the rest of the adapter.
package unpack
