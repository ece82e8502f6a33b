package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
)

const usage = `fennec: self-hosted project hosting and CI that speaks the GitLab API v4.

Usage:
  fennec serve [flags]          run the server
  fennec backup [--data DIR] FILE
                                write a consistent copy of the store to FILE
                                (works while the server runs)
  fennec repo gc [--data DIR] PROJECT
                                repack a project's repository (PROJECT: id or
                                group/project) into one pack with a
                                reachability index (works while serving)
  fennec repo fsck [--data DIR] PROJECT
                                check every object the project's refs reach
  fennec version                print the version and revision
  fennec help                   show this help

Flags of serve (each also read from the environment; flags win over the
environment, the environment over the config file):
`

const footer = `
Other environment variables:
  FENNEC_ROOT_PASSWORD   password of the administrator "root" created on the
                         first start (default: generated and printed once)
  FENNEC_MAX_BODY_BYTES  API request body limit in bytes (default 10485760)
  FENNEC_MAX_PUSH_BYTES  git push size limit in bytes (default 2147483648)
`

func run(args []string, modules []fennec.Module, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		args = []string{"help"}
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], modules, stderr)
	case "backup":
		return backup(args[1:], stdout, stderr)
	case "repo":
		return repoCommand(args[1:], modules, stdout, stderr)
	case "version", "--version", "-v":
		v, r := fennec.Version()
		fmt.Fprintf(stdout, "fennec %s (revision %s)\n", v, r)
		return 0
	case "help", "--help", "-h", "-help":
		printHelp(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "fennec: unknown command %q\n\n", args[0])
	printHelp(stderr)
	return 2
}

func printHelp(w io.Writer) {
	fmt.Fprint(w, usage)
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	config.NewFlags(fs)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fmt.Fprint(w, footer)
}

func serve(args []string, modules []fennec.Module, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	flags := config.NewFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	cfg, err := flags.Load(os.LookupEnv)
	if err != nil {
		fmt.Fprintln(stderr, "fennec:", err)
		return 2
	}
	app, err := fennec.New(fennec.WithConfig(cfg), fennec.WithModules(modules...))
	if err != nil {
		fmt.Fprintln(stderr, "fennec:", err)
		return 1
	}
	if err := app.Run(); err != nil {
		fmt.Fprintln(stderr, "fennec:", err)
		return 1
	}
	return 0
}

func backup(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", envOr("FENNEC_DATA", "./data"), "data directory of the server (env FENNEC_DATA)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "fennec backup: name the file to write: fennec backup [--data DIR] FILE")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	n, err := fennec.Backup(ctx, *data, fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "fennec backup:", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes)\n", fs.Arg(0), n)
	return 0
}

// repoCommand runs the repository module's admin commands.
func repoCommand(args []string, modules []fennec.Module, stdout, stderr io.Writer) int {
	const use = "fennec repo gc|fsck [--data DIR] PROJECT"
	if len(args) == 0 || (args[0] != "gc" && args[0] != "fsck") {
		fmt.Fprintln(stderr, "usage:", use)
		return 2
	}
	name := "repo-" + args[0]
	fs := flag.NewFlagSet("repo "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", envOr("FENNEC_DATA", "./data"), "data directory of the server (env FENNEC_DATA)")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage:", use)
		return 2
	}
	cfg := config.Default()
	cfg.Data = *data
	cfg.LogLevel = "warn"
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Hour)
	defer cancel()
	if err := fennec.RunCommand(ctx, cfg, name, fs.Args(), stdout, fennec.WithModules(modules...)); err != nil {
		fmt.Fprintf(stderr, "fennec repo %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
