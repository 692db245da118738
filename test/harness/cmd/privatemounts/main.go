package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "privatemounts: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	sep := -1
	for i, a := range args {
		if a == "--" {
			sep = i
			break
		}
	}
	if sep < 0 || sep == len(args)-1 {
		return errors.New("usage: privatemounts SOURCE:TARGET... -- PROGRAM ARGS...")
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private (is this a new mount namespace, as root?): %w", err)
	}
	for _, b := range args[:sep] {
		source, target, ok := strings.Cut(b, ":")
		if !ok || source == "" || target == "" {
			return fmt.Errorf("bind %q: want SOURCE:TARGET", b)
		}
		if err := unix.Mount(source, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s over %s: %w", source, target, err)
		}
	}
	prog := args[sep+1:]
	return unix.Exec(prog[0], prog, os.Environ())
}
