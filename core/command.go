package fennec

// Admin commands: maintenance a module offers to the operator's command
// line (`fennec repo gc PROJECT`). A command runs inside the application,
// with its services: through the admin socket of the running server when
// there is one, otherwise in an application started for the command alone
// on the same data directory (no listener).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"time"

	"go.uber.org/fx"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/config"
)

// AdminCommand is one maintenance command. Run writes its report to out;
// its context carries the system principal (auth.System: the operator owns
// the data directory, and so may do everything).
type AdminCommand struct {
	Name string // as typed after "fennec", words joined by "-": "repo-gc"
	Run  func(ctx context.Context, args []string, out io.Writer) error
}

// AdminCommandSpec is what the command line knows of a command before any
// app is assembled: its name (as AdminCommand.Name), the arguments it takes
// after [--data DIR], and what it does.
type AdminCommandSpec struct {
	Name, Args, Summary string
	// Flags are the boolean flags the command takes; the command line
	// passes each one given to Run as an argument "--name", after the others.
	Flags []AdminFlag
	// Secret, when set, is the prompt for a secret the command needs (a new
	// password): the command line reads it without echo from a terminal, or
	// as one line of standard input, never from an argument that would land
	// in the shell's history, and hands it to Run in the context
	// (CommandSecret). With --generate the command line reads nothing and
	// the command makes one itself.
	Secret string
}

// AdminFlag is a boolean flag of an admin command.
type AdminFlag struct {
	Name, Usage string
}

type secretKey struct{}

// WithCommandSecret gives an admin command the secret the command line read.
func WithCommandSecret(ctx context.Context, secret string) context.Context {
	return context.WithValue(ctx, secretKey{}, secret)
}

// CommandSecret is the secret the command line read for the command
// (AdminCommandSpec.Secret); ok is false when it read none (--generate).
func CommandSecret(ctx context.Context) (secret string, ok bool) {
	secret, ok = ctx.Value(secretKey{}).(string)
	return secret, ok
}

const groupCommands = `group:"fennec.commands,flatten"`

// AdminCommands is what ProvideAdminCommands returns: an fx option that
// NewModule also reads, so the CLI can list and dispatch the commands
// without assembling the app.
type AdminCommands struct {
	fx.Option
	specs []AdminCommandSpec
}

// ProvideAdminCommands adds a constructor returning []AdminCommand, and
// declares those commands (every one it returns must be declared, and the
// other way round; New checks).
func ProvideAdminCommands[D any](ctor func(D) []AdminCommand, specs ...AdminCommandSpec) AdminCommands {
	return AdminCommands{Option: fx.Provide(fx.Annotate(ctor, fx.ResultTags(groupCommands))), specs: specs}
}

// AdminCommandSpecs are the admin commands of the module.
func (m Module) AdminCommandSpecs() []AdminCommandSpec { return m.commands }

// checkCommands refuses a command built without being declared, or
// declared without being built, so the CLI's list is the truth.
func checkCommands(specs []AdminCommandSpec, built []AdminCommand) error {
	declared := map[string]bool{}
	for _, s := range specs {
		declared[s.Name] = true
	}
	for _, c := range built {
		if !declared[c.Name] {
			return fmt.Errorf("fennec: admin command %q is not declared in ProvideAdminCommands", c.Name)
		}
		delete(declared, c.Name)
	}
	for name := range declared {
		return fmt.Errorf("fennec: admin command %q is declared but not provided", name)
	}
	return nil
}

type commandsParams struct {
	fx.In
	Commands []AdminCommand `group:"fennec.commands"`
}

// Commands lists the admin commands of the app's modules, by name.
func (a *App) Commands() []AdminCommand {
	out := append([]AdminCommand(nil), a.commands...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// runCommand runs a command of this app.
func (a *App) runCommand(ctx context.Context, name string, args []string, out io.Writer) error {
	for _, c := range a.commands {
		if c.Name == name {
			return c.Run(auth.WithPrincipal(ctx, auth.System()), args, out)
		}
	}
	return fmt.Errorf("unknown command %q", name)
}

// serveCommand is the admin socket's POST /command/{name}: the body is
// {"args": [...]}, the answer streams the command's output and ends with
// the Fennec-Error trailer (empty on success).
func (a *App) serveCommand(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Args   []string `json:"args"`
		Secret *string  `json:"secret"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	w.Header().Set("Trailer", "Fennec-Error")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fw := flushWriter{w}
	ctx := r.Context()
	if body.Secret != nil {
		ctx = WithCommandSecret(ctx, *body.Secret)
	}
	err := a.runCommand(ctx, r.PathValue("name"), body.Args, fw)
	if err != nil {
		w.Header().Set("Fennec-Error", err.Error())
	}
}

type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if fl, ok := f.w.(http.Flusher); ok {
		fl.Flush()
	}
	return n, err
}

// RunCommand runs the admin command name on the data directory of cfg:
// through the running server's admin socket when the store is in use,
// otherwise in an application assembled from opts for this command alone.
func RunCommand(ctx context.Context, cfg config.Config, name string, args []string, out io.Writer, opts ...Option) error {
	served, err := serverHolds(ctx, cfg)
	if err != nil {
		return err
	}
	if !served {
		return runOffline(ctx, cfg, name, args, out, opts)
	}
	return runThroughSocket(ctx, cfg.Data, name, args, out)
}

func runOffline(ctx context.Context, cfg config.Config, name string, args []string, out io.Writer, opts []Option) error {
	cfg.Listen = ""
	app, err := New(append(opts, WithConfig(cfg))...)
	if err != nil {
		return err
	}
	if err := app.Start(ctx); err != nil {
		return err
	}
	runErr := app.runCommand(ctx, name, args, out)
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return errors.Join(runErr, app.Stop(stopCtx))
}

func runThroughSocket(ctx context.Context, dataDir, name string, args []string, out io.Writer) error {
	req := map[string]any{"args": args}
	if secret, ok := CommandSecret(ctx); ok {
		req["secret"] = secret // in the body of a request to a 0600 socket, never in an argument list
	}
	body, _ := json.Marshal(req)
	resp, err := adminRequest(ctx, dataDir, http.MethodPost, "/command/"+name, bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("server refused the command: %s: %s", resp.Status, msg)
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		return err
	}
	if msg := resp.Trailer.Get("Fennec-Error"); msg != "" {
		return errors.New(msg)
	}
	return nil
}
