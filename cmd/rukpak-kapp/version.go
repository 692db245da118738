package main

import (
	"runtime/debug"
)

// version is set by the release build (-X main.version=...).
var version = "dev"

// versionString is the release version and, when the binary was built from
// a git checkout, the commit (with "+modified" for uncommitted changes).
func versionString() string {
	s := version
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return s
	}
	var revision, modified string
	for _, kv := range info.Settings {
		switch kv.Key {
		case "vcs.revision":
			revision = kv.Value
		case "vcs.modified":
			if kv.Value == "true" {
				modified = "+modified"
			}
		}
	}
	if revision != "" {
		s += " (" + revision + modified + ")"
	}
	return s
}
