package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"golang.org/x/term"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
)

const usage = `fennec: self-hosted project hosting and CI that speaks the GitLab API v4.

Usage:
  fennec serve [flags]          run the server
  fennec backup [--data DIR] FILE
                                write a consistent copy of the store to FILE
                                (works while the server runs)
  fennec config [--markdown]    list every setting: key, environment
                                variable, flag, default, meaning
  fennec version                print the version and revision
  fennec help                   show this help
`

const commandsHeader = `
Admin commands of the modules (they work while the server runs, through its
admin socket, and when it does not):
`

const flagsHeader = `
Flags of serve (each also read from the environment; flags win over the
environment, the environment over the config file; every other setting:
fennec config):
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
	case "config":
		return settings(args[1:], modules, stdout, stderr)
	case "version", "--version", "-v":
		v, r := fennec.Version()
		fmt.Fprintf(stdout, "fennec %s (revision %s)\n", v, r)
		return 0
	case "help", "--help", "-h", "-help":
		if len(args) > 1 && args[1] == "config" {
			return settings(nil, modules, stdout, stderr)
		}
		printHelp(stdout, modules)
		return 0
	}
	if spec, ok := findCommand(args, modules); ok {
		return adminCommand(spec, args[2:], modules, os.Stdin, stdout, stderr)
	}
	fmt.Fprintf(stderr, "fennec: unknown command %q\n\n", strings.Join(args[:min(2, len(args))], " "))
	printHelp(stderr, modules)
	return 2
}

func printHelp(w io.Writer, modules []fennec.Module) {
	fmt.Fprint(w, usage)
	fmt.Fprint(w, commandsHeader)
	for _, m := range modules {
		for _, c := range m.AdminCommandSpecs() {
			opts := ""
			for _, f := range c.Flags {
				opts += " [--" + f.Name + "]"
			}
			if c.Secret != "" {
				opts += " [--generate]"
			}
			fmt.Fprintf(w, "  fennec %s [--data DIR]%s %s\n      %s\n", strings.Replace(c.Name, "-", " ", 1), opts, c.Args, c.Summary)
		}
	}
	fmt.Fprint(w, flagsHeader)
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	config.NewFlags(fs, sections(modules)...)
	fs.SetOutput(w)
	fs.PrintDefaults()
	printUnflagged(w, modules)
}

// printUnflagged lists the settings that have no flag (file or environment
// only), so that help shows every setting, not only the flags.
func printUnflagged(w io.Writer, modules []fennec.Module) {
	var rest []config.Setting
	for _, s := range fennec.Settings(modules...) {
		if s.Flag == "" {
			rest = append(rest, s)
		}
	}
	fmt.Fprint(w, "\nSettings without a flag (the YAML file's key, its environment variable if any):\n")
	config.WriteText(w, rest)
}

// sections are the modules' settings sections (for their flags).
func sections(modules []fennec.Module) []config.Section {
	var out []config.Section
	for _, m := range modules {
		out = append(out, m.ConfigSections()...)
	}
	return out
}

// settings prints the settings table of the core and of the modules.
func settings(args []string, modules []fennec.Module, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	markdown := fs.Bool("markdown", false, "print the table as the README shows it")
	// The help of "config" is the table itself (fennec config --help).
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stderr, "usage: fennec config [--markdown]")
		return 2
	}
	if *markdown {
		config.WriteMarkdown(stdout, fennec.Settings(modules...))
		return 0
	}
	fmt.Fprint(stdout, settingsHeader)
	config.WriteText(stdout, fennec.Settings(modules...))
	return 0
}

const settingsHeader = `Settings of fennec serve, in rising precedence: defaults, the YAML file,
environment variables, flags. A module's settings are its section of the file
(identity.password_cost is password_cost: under identity:). Unknown keys are
an error.

`

func serve(args []string, modules []fennec.Module, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage of fennec serve (flags win over the environment, the environment over the file):\n")
		fs.PrintDefaults()
		printUnflagged(stderr, modules)
	}
	flags := config.NewFlags(fs, sections(modules)...)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	cfg, err := flags.Load(os.LookupEnv)
	if err != nil {
		fmt.Fprintln(stderr, "fennec:", strings.TrimPrefix(err.Error(), "fennec: "))
		return 2
	}
	app, err := fennec.New(fennec.WithConfig(cfg), fennec.WithModules(modules...))
	if err != nil {
		fmt.Fprintln(stderr, "fennec:", strings.TrimPrefix(err.Error(), "fennec: "))
		return 1
	}
	tuneGC(os.LookupEnv)
	if err := app.Run(); err != nil {
		fmt.Fprintln(stderr, "fennec:", strings.TrimPrefix(err.Error(), "fennec: "))
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

// findCommand finds the admin command args name: "fennec repo gc ..." is
// the command repo-gc.
func findCommand(args []string, modules []fennec.Module) (fennec.AdminCommandSpec, bool) {
	if len(args) < 2 {
		return fennec.AdminCommandSpec{}, false
	}
	name := args[0] + "-" + args[1]
	for _, m := range modules {
		for _, c := range m.AdminCommandSpecs() {
			if c.Name == name {
				return c, true
			}
		}
	}
	return fennec.AdminCommandSpec{}, false
}

// adminCommand runs a module's admin command.
func adminCommand(spec fennec.AdminCommandSpec, args []string, modules []fennec.Module, stdin io.Reader, stdout, stderr io.Writer) int {
	words := strings.Replace(spec.Name, "-", " ", 1)
	use := fmt.Sprintf("fennec %s [--data DIR] %s", words, spec.Args)
	fs := flag.NewFlagSet(words, flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", envOr("FENNEC_DATA", "./data"), "data directory of the server (env FENNEC_DATA)")
	flags := make([]*bool, len(spec.Flags))
	for i, f := range spec.Flags {
		flags[i] = fs.Bool(f.Name, false, f.Usage)
	}
	var generate *bool
	if spec.Secret != "" {
		generate = fs.Bool("generate", false, "make a random "+spec.Secret+" and print it, instead of reading one")
	}
	// Flags may come before or after the arguments ("user list --admins").
	var positional []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if spec.Args != "" && !strings.HasPrefix(spec.Args, "[") && len(positional) == 0 {
		fmt.Fprintln(stderr, "usage:", use)
		return 2
	}
	for i, f := range spec.Flags {
		if *flags[i] {
			positional = append(positional, "--"+f.Name)
		}
	}
	cfg := config.Default()
	cfg.Data = *data
	cfg.LogLevel = "warn"
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Hour)
	defer cancel()
	if generate != nil && !*generate {
		secret, err := readSecret(stdin, stderr, spec.Secret)
		if err != nil {
			fmt.Fprintf(stderr, "fennec %s: %v\n", words, err)
			return 1
		}
		ctx = fennec.WithCommandSecret(ctx, secret)
	}
	if err := fennec.RunCommand(ctx, cfg, spec.Name, positional, stdout, fennec.WithModules(modules...)); err != nil {
		fmt.Fprintf(stderr, "fennec %s: %v\n", words, err)
		return 1
	}
	return 0
}

// readSecret reads a secret: typed twice without echo on a terminal, or the
// first line of standard input otherwise (a pipe, a file).
func readSecret(stdin io.Reader, stderr io.Writer, what string) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(stderr, "%s: ", what)
		first, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(stderr, "%s again: ", what)
		second, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", err
		}
		if string(first) != string(second) {
			return "", errors.New("the two entries differ")
		}
		return string(first), nil
	}
	line, err := bufio.NewReader(io.LimitReader(stdin, 64<<10)).ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return "", fmt.Errorf("read the %s from standard input: %w", what, err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// serverGCPercent is the stock server's GOGC. A server's live heap is small
// (rows and objects are on disk, git data streams), so Go's default of 100
// runs the collector very often under load; at 400 the write benchmark
// gains about 15% while the heap stays within a few times its live size.
// GOGC in the environment wins, as everywhere in Go.
const serverGCPercent = 400

func tuneGC(env func(string) (string, bool)) {
	if _, set := env("GOGC"); !set {
		debug.SetGCPercent(serverGCPercent)
	}
}
