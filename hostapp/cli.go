package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"golang.org/x/term"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
)

const usage = `fennec: self-hosted project hosting and CI that speaks the GitLab API v4.

Usage:
  fennec serve [flags]          run the server
  fennec backup [--data DIR] [--store URL] [--gzip|-z] [--without-secret-key] FILE
                                write one archive of everything (the store,
                                repositories, uploads, CI traces and artifacts,
                                secret.key) to FILE, consistent while the
                                server runs; gzip with -z or a .tar.gz/.tgz name
  fennec restore [--data DIR] [--store URL] [--force] FILE
                                restore an archive into an empty data directory
                                (--force: replace what is there), verifying
                                checksums and every repository (git fsck); with
                                a postgres:// store the archive's store is
                                loaded into that database, which must hold no
                                Fennec data (--force: replace it)
  fennec store copy [--data DIR] [--store URL] --to DEST
                                copy the store to another engine, to move the
                                instance: DEST is a postgres:// URL, bbolt
                                (DIR/fennec.db) or file:PATH; it must be empty;
                                the copy is verified key by key
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
		return backup(args[1:], modules, stdout, stderr)
	case "restore":
		return restore(args[1:], modules, stdout, stderr)
	case "store":
		if len(args) > 1 && args[1] == "copy" {
			return storeCopy(args[2:], stdout, stderr)
		}
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
	tuneGC(os.LookupEnv, cfg.MemoryLimit)
	if err := app.Run(); err != nil {
		fmt.Fprintln(stderr, "fennec:", strings.TrimPrefix(err.Error(), "fennec: "))
		return 1
	}
	return 0
}

// parseInterspersed parses flags that may come before or after the
// positional arguments, which it returns.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
}

func backup(args []string, modules []fennec.Module, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", envOr("FENNEC_DATA", "./data"), "data directory of the server (env FENNEC_DATA)")
	storeURL := storeFlag(fs)
	var gz bool
	fs.BoolVar(&gz, "gzip", false, "compress the archive with gzip (also chosen by a .tar.gz or .tgz name)")
	fs.BoolVar(&gz, "z", false, "short for --gzip")
	noKey := fs.Bool("without-secret-key", false, "leave DIR/secret.key out of the archive (keep it apart, safely: the sealed secrets need it)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "fennec backup: name the file to write: fennec backup [--data DIR] [--store URL] [--gzip] [--without-secret-key] FILE")
		return 2
	}
	dest := pos[0]
	gz = gz || strings.HasSuffix(dest, ".tar.gz") || strings.HasSuffix(dest, ".tgz")
	ctx, cancel := context.WithTimeout(context.Background(), 24*time.Hour)
	defer cancel()
	start := time.Now()
	m, size, err := writeBackupFile(ctx, *data, storeURL(), dest, gz, fennec.BackupOptions{WithoutSecretKey: *noKey}, modules, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "fennec backup:", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s (%d bytes) in %s: %d entries, %s of files; %s\n", dest, size,
		time.Since(start).Round(time.Millisecond), len(m.Files), humanBytes(m.Bytes), counts(m.Counts))
	if m.SecretKey {
		fmt.Fprintln(stdout, "the archive holds secret.key, which opens the sealed secrets of the store: keep it as safe as the key itself")
	} else {
		fmt.Fprintln(stdout, "the archive does not hold secret.key: keep the key apart, a restore needs it")
	}
	return 0
}

// writeBackupFile writes the archive to a temporary file beside dest,
// checking it as it passes, and renames it into place once complete.
func writeBackupFile(ctx context.Context, dataDir, storeURL, dest string, gz bool, bo fennec.BackupOptions, modules []fennec.Module, stderr io.Writer) (*fennec.BackupManifest, int64, error) {
	tmp, err := os.CreateTemp(filepath.Dir(dest), ".fennec-backup-*")
	if err != nil {
		return nil, 0, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := tmp.Chmod(0o600); err != nil {
		return nil, 0, err
	}
	var sink io.Writer = tmp
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(tmp)
		sink = zw
	}
	cfg := config.Default()
	cfg.Data = dataDir
	cfg.Store = storeURL
	if err := cfg.Validate(); err != nil {
		return nil, 0, err
	}
	cfg.LogLevel = "error" // an offline backup assembles the modules: their start-up notes are noise here
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := fennec.Backup(ctx, cfg, pw, bo, fennec.WithModules(modules...))
		pw.CloseWithError(err)
		errc <- err
	}()
	m, checkErr := fennec.CheckBackupStream(pr, sink, newProgress(stderr))
	pr.CloseWithError(errors.New("the archive was not read to its end"))
	if err := <-errc; err != nil {
		return nil, 0, err
	}
	if checkErr != nil {
		return nil, 0, checkErr
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return nil, 0, err
		}
	}
	if err := tmp.Sync(); err != nil {
		return nil, 0, err
	}
	fi, err := tmp.Stat()
	if err != nil {
		return nil, 0, err
	}
	if err := tmp.Close(); err != nil {
		return nil, 0, err
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return nil, 0, err
	}
	return m, fi.Size(), nil
}

// counts prints a manifest's counts, by name.
func counts(c map[string]int64) string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", c[k], k))
	}
	return strings.Join(parts, ", ")
}

func restore(args []string, modules []fennec.Module, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", envOr("FENNEC_DATA", "./data"), "data directory to restore into (env FENNEC_DATA)")
	storeURL := storeFlag(fs)
	force := fs.Bool("force", false, "restore into a data directory (or a PostgreSQL database) that is not empty, replacing its data")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "fennec restore: name the archive: fennec restore [--data DIR] [--store URL] [--force] FILE")
		return 2
	}
	if storeURL() != "" && !strings.HasPrefix(storeURL(), "postgres://") && !strings.HasPrefix(storeURL(), "postgresql://") {
		fmt.Fprintln(stderr, "fennec restore: --store must be empty (fennec.db in the data directory) or a postgres:// URL")
		return 2
	}
	f, err := os.Open(pos[0])
	if err != nil {
		fmt.Fprintln(stderr, "fennec restore:", err)
		return 1
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 24*time.Hour)
	defer cancel()
	start := time.Now()
	rep, err := fennec.Restore(ctx, f, *data, fennec.RestoreOptions{Force: *force, Store: storeURL(),
		Specs: fennec.BackupSpecsOf(modules...), Progress: newProgress(stderr)})
	if err != nil {
		fmt.Fprintln(stderr, "fennec restore:", err)
		return 1
	}
	m := rep.Manifest
	fmt.Fprintf(stdout, "restored %s into %s in %s: %d files and %d directories, %s; %s\n", pos[0], *data,
		time.Since(start).Round(time.Millisecond), rep.Files, rep.Dirs, humanBytes(rep.Bytes), counts(m.Counts))
	fmt.Fprintf(stdout, "the archive was written by fennec %s on %s\n", m.FennecVersion, m.CreatedAt.Format(time.RFC3339))
	for _, line := range rep.Summary {
		fmt.Fprintln(stdout, line)
	}
	if v, _ := fennec.Version(); v != m.FennecVersion {
		fmt.Fprintf(stdout, "note: this is fennec %s; the store is migrated when the server starts\n", v)
	}
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
	storeURL := storeFlag(fs)
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
	cfg.Store = storeURL()
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "fennec %s: %v\n", words, err)
		return 2
	}
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

// storeFlag is the --store flag of the commands that work on a data
// directory offline: the store the server of that directory uses, when it
// is not the file fennec.db there. The value, read after parsing, falls
// back to FENNEC_STORE; that is not the flag's default, which help would
// print, password and all.
func storeFlag(fs *flag.FlagSet) func() string {
	v := fs.String("store", "", "the server's store when it is PostgreSQL: a postgres:// URL (env FENNEC_STORE)")
	return func() string {
		if *v != "" {
			return *v
		}
		return os.Getenv("FENNEC_STORE")
	}
}

const storeCopyUsage = `usage: fennec store copy [--data DIR] [--store URL] --to DEST

Copies the store of the data directory DIR (its fennec.db, or the PostgreSQL
database --store or FENNEC_STORE names) into DEST, to move the instance to
another engine:

  --to postgres://USER:PASSWORD@HOST/DB   a PostgreSQL database
  --to bbolt                              DIR/fennec.db
  --to file:/path/fennec.db               a bbolt file elsewhere

The destination must hold no Fennec data. The copy is read from one
snapshot and verified afterwards: every bucket's keys, values and sequence
must match; a failed copy leaves the destination empty again.

No server may run on the source meanwhile. For fennec.db the file's lock
guarantees it. For PostgreSQL, stop every node that uses the database before
copying: a server on DIR is refused, and a source that changes during the
copy fails it, but nodes elsewhere cannot be seen from here.

Then point the configuration at the copy (store: in the file, FENNEC_STORE
or --store; empty for DIR/fennec.db) and start the server. The data
directory (repositories, uploads, secret.key) stays where it is.
`

func storeCopy(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("store copy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, storeCopyUsage, "\nFlags:\n")
		fs.PrintDefaults()
	}
	data := fs.String("data", envOr("FENNEC_DATA", "./data"), "data directory of the server (env FENNEC_DATA)")
	storeURL := storeFlag(fs)
	to := fs.String("to", "", "where to copy the store: a postgres:// URL, bbolt, or file:PATH")
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	if len(pos) != 0 || *to == "" {
		fmt.Fprint(stderr, storeCopyUsage)
		return 2
	}
	cfg := config.Default()
	cfg.Data = *data
	cfg.Store = storeURL()
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(stderr, "fennec store copy:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 24*time.Hour)
	defer cancel()
	start := time.Now()
	rep, err := fennec.CopyStore(ctx, cfg, *to)
	if err != nil {
		fmt.Fprintln(stderr, "fennec store copy:", err)
		return 1
	}
	fmt.Fprintf(stdout, "copied %s into %s in %s: %d buckets, %d keys; verified (keys, values and sequences of every bucket match)\n",
		rep.From, rep.To, time.Since(start).Round(time.Millisecond), rep.Buckets, rep.Keys)
	fmt.Fprintln(stdout, "point the configuration's store at the copy before starting the server")
	return 0
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// serverGCPercent is the stock server's GOGC. A server's live heap is small
// (rows and objects are on disk, git data streams); 200 halves how often
// Go's default of 100 collects under load, while the soft memory limit
// (memory_limit, 128 MiB by default) makes the collector work harder, and
// return memory to the system, as the heap nears it, so an idle server
// stays small. (400 without a limit gained a few percent of writes but let
// the heap grow to five times the live data: 90 MB idle at 10,000
// projects.) GOGC and GOMEMLIMIT in the environment win, as everywhere in
// Go.
const serverGCPercent = 200

// tuneGC applies the server's collector settings: GOGC, and the soft
// memory limit of the configuration (0: none).
func tuneGC(env func(string) (string, bool), memoryLimit int64) {
	if _, set := env("GOGC"); !set {
		debug.SetGCPercent(serverGCPercent)
	}
	if _, set := env("GOMEMLIMIT"); !set && memoryLimit > 0 {
		debug.SetMemoryLimit(memoryLimit)
	}
}
