package cmd

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version and Revision are the release's version and the commit it was
// built from, set by the release build's -X flags (release/gobuild.go); a build
// without them is "dev", stamped with go build's own VCS revision.
var Version, Revision = "dev", ""

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
	if Revision != "" {
		return Version + " (" + Revision + ")"
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return Version
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
		return Version
	}
	return Version + " (" + rev + modified + ")"
}
