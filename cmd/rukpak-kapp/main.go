package main

import (
	"os"

	"github.com/rukpak-kapp/rukpak-kapp/cmd/rukpak-kapp/cmd"
)

func main() {
	os.Exit(cmd.Execute(os.Args[1:], os.Stdout, os.Stderr))
}
