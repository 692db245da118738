package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/rukpak-kapp/rukpak-kapp/convert"
)

// convertCmd converts a registry+v1 bundle directory offline, with the same
// code the controller uses.
func convertCmd(args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "registry-v1" {
		return errors.New(`convert needs a format: convert registry-v1 DIR --install-namespace NS [--watch-namespaces A,B]`)
	}
	fs := flag.NewFlagSet("convert registry-v1", flag.ContinueOnError)
	installNS := fs.String("install-namespace", "", "namespace the operator is installed in (required)")
	watch := fs.String("watch-namespaces", "", `comma-separated namespaces the operator watches; "" for all; empty picks the bundle's default`)
	// The directory may come before or after the flags.
	rest := args[1:]
	var dir string
	if len(rest) > 0 && rest[0] != "" && rest[0][0] != '-' {
		dir, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if dir == "" && fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	if dir == "" || *installNS == "" {
		return errors.New("convert registry-v1 needs a bundle directory and --install-namespace")
	}
	files, err := convert.ReadDir(os.DirFS(dir))
	if err != nil {
		return err
	}
	data, err := convert.YAML(files, convert.Options{InstallNamespace: *installNS, WatchNamespaces: splitList(*watch)})
	if err != nil {
		return err
	}
	if _, err := out.Write(data); err != nil {
		return fmt.Errorf("write manifests: %w", err)
	}
	return nil
}
