package cmd

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Execute runs one command line and returns the exit code: 0, 1 when the
// command failed (or a plan is blocked), 2 for a command line that is not
// understood.
func Execute(args []string, out, errOut io.Writer) int {
	root := newRootCommand()
	root.SetArgs(args)
	root.SetOut(out)
	root.SetErr(errOut)
	cmd, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	fmt.Fprintf(errOut, "rukpak-kapp: %v\n", err)
	var usage usageError
	if errors.As(err, &usage) {
		fmt.Fprintf(errOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
		return 2
	}
	return 1
}

// usageError is a command line that is not understood.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usageArgs makes an argument check's failure a usage error.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// argsAreUsage makes every argument check of cmd's tree, cobra's own
// completion commands' included, a usage error, so that no command can
// forget to: a wrong argument count exits 2 wherever it is given. A
// command that only groups others and has no check of its own refuses
// arguments and asks for a command, as cobra would otherwise print its
// help and exit 0.
func argsAreUsage(cmd *cobra.Command) {
	switch {
	case cmd.Args != nil:
		cmd.Args = usageArgs(cmd.Args)
	case cmd.HasSubCommands():
		cmd.Args = usageArgs(cobra.NoArgs)
	}
	if cmd.HasSubCommands() && !cmd.Runnable() {
		cmd.RunE = needsSubcommand
	}
	for _, sub := range cmd.Commands() {
		argsAreUsage(sub)
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use: "rukpak-kapp",
		Example: `  # what the cluster lacks for BundleDeployments, and what to fix
  rukpak-kapp check
  # the App a BundleDeployment becomes, offline
  rukpak-kapp render -f bundledeployment.yaml`,
		Short: "Serve rukpak's BundleDeployment API with kapp-controller",
		Long: "rukpak-kapp keeps rukpak's BundleDeployment API (core.rukpak.io/v1alpha2) and hands each " +
			"BundleDeployment to Carvel's kapp-controller as an App.",
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.NoArgs,
		RunE:          needsSubcommand,
	}
	// Children inherit the root's: every flag error is a usage error, and
	// every --help ends with the exit codes.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.SetUsageTemplate(root.UsageTemplate() + exitCodes)
	root.AddCommand(newRunCommand(), newCheckCommand(), newRenderCommand(), newConvertCommand(), newCatalogCommand(), newMigrateCommand(), newUpgradeCommand(), newVersionCommand())
	// cobra adds these when it executes; added now, argsAreUsage reaches
	// them too (adding them again is a no-op).
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	argsAreUsage(root)
	return root
}

// exitCodes ends every command's usage: what Execute returns.
const exitCodes = `
Exit codes:
  0  done as asked
  1  failed, or found what stops it: check, something missing; migrate plan, a blocked move;
     upgrade plan, a hop that would be refused
  2  the command line is not understood (an unknown flag or command, an argument too many or too
     few, a flag value it cannot take)
`

// needsSubcommand is the run of a command that only groups others.
func needsSubcommand(cmd *cobra.Command, _ []string) error {
	return usageError{fmt.Errorf("%s needs a command: %s", cmd.CommandPath(), commandNames(cmd))}
}

// commandNames lists cmd's subcommands for an error message.
func commandNames(cmd *cobra.Command) string {
	names := ""
	for _, c := range cmd.Commands() {
		if !c.IsAvailableCommand() || c.Name() == "help" {
			continue
		}
		if names != "" {
			names += ", "
		}
		names += c.Name()
	}
	return names
}
