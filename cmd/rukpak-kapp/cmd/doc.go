// Package cmd holds rukpak-kapp's cobra commands: their flags, argument
// checks and exit codes (Execute), and how each prints what it got (-o
// text, json or yaml for a report, yaml or json for objects). The work
// itself is package client's, or the adapter's for run.
package cmd
