package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version and revision are set by the release build
// (-X main.version=... -X main.revision=...).
var version, revision = "dev", ""

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Example: `  rukpak-kapp version`,
		Short:   "Print the version and the commit it was built from",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionString())
			return err
		},
	}
}

// versionString is the release version and the commit the binary was built
// from: the release build's, else what go build stamped from git ("+modified"
// for uncommitted changes).
func versionString() string {
	if revision != "" {
		return version + " (" + revision + ")"
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return version
	}
	var rev, modified string
	for _, kv := range info.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.modified":
			if kv.Value == "true" {
				modified = "+modified"
			}
		}
	}
	if rev == "" {
		return version
	}
	return version + " (" + rev + modified + ")"
}
