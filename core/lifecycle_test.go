package fennec_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
)

// journal records what happened, in order.
type journal struct {
	mu   sync.Mutex
	said []string
}

func (j *journal) add(s string) {
	j.mu.Lock()
	j.said = append(j.said, s)
	j.mu.Unlock()
}

func (j *journal) list() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.said)
}

func (j *journal) index(t *testing.T, s string) int {
	t.Helper()
	i := slices.Index(j.list(), s)
	if i < 0 {
		t.Fatalf("%q never happened: %q", s, j.list())
	}
	return i
}

type provisioned struct{}

func (provisioned) EventTopic() string { return "lifecycletest.provisioned" }

// base provisions (publishing an event the bus may deliver only later),
// runs a loop and cleans up; top depends on it and provisions after it.
type base struct {
	j   *journal
	db  *store.DB
	bus *events.Bus
}

func (b *base) Provision(ctx context.Context) error {
	b.j.add("provision base")
	return b.db.Update(ctx, func(tx *store.Tx) error { return b.bus.Publish(tx, provisioned{}) })
}

func (b *base) Run(ctx context.Context) error {
	b.j.add("run base")
	<-ctx.Done()
	b.j.add("run base returns")
	return ctx.Err()
}

func (b *base) Cleanup() error {
	// The store is still open.
	err := b.db.View(context.Background(), func(*store.Tx) error { return nil })
	b.j.add("cleanup base")
	return err
}

type top struct{ j *journal }

func (t *top) Provision(context.Context) error { t.j.add("provision top"); return nil }
func (t *top) Cleanup() error                  { t.j.add("cleanup top"); return nil }

// failing is a loop that gives up at once.
type failing struct{}

func (failing) Run(context.Context) error { return errors.New("the loop broke") }

// Provided is what a module provides under its contract's interface too.
type Provided interface{ Provision(context.Context) error }

// TestLifecycleOrder: values a module provides are constructed even when
// nothing asks for them; Provision runs in construction order before the
// bus delivers; Run starts after and stops before the bus; Cleanup runs in
// reverse order while the store is still open; a value provided under two
// types takes part once; a loop's error is logged.
func TestLifecycleOrder(t *testing.T) {
	j := &journal{}
	cfg := config.Default()
	cfg.Listen = ""
	cfg.Data = t.TempDir()
	core, logs := observer.New(zap.InfoLevel)
	mod := fennec.NewModule("lifecycletest",
		fennec.Provide(
			func(db *store.DB, bus *events.Bus) *base { j.add("new base"); return &base{j: j, db: db, bus: bus} },
			func(*base) *top { j.add("new top"); return &top{j: j} },
			func(b *base) Provided { return b },
			func() failing { return failing{} },
		),
		fennec.ProvideSubscribers(func(fennec.None) []events.Subscriber {
			return []events.Subscriber{events.Subscribe("lifecycletest.delivered", func(context.Context, provisioned) error {
				j.add("delivered")
				return nil
			})}
		}),
	)
	app, err := fennec.New(fennec.WithConfig(cfg), fennec.WithModules(mod), fennec.WithLogger(zap.New(core)))
	if err != nil {
		t.Fatal(err)
	}
	if got := j.list(); !slices.Equal(got, []string{"new base", "new top"}) {
		t.Fatalf("after New: %q", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !slices.Contains(j.list(), "delivered") || !slices.Contains(j.list(), "run base") {
		if time.Now().After(deadline) {
			t.Fatalf("no delivery or no run: %q", j.list())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := app.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	got := j.list()
	provBase, provTop := j.index(t, "provision base"), j.index(t, "provision top")
	if provBase > provTop || j.index(t, "delivered") < provTop || j.index(t, "run base") < provTop {
		t.Errorf("provisioning must come first, in construction order: %q", got)
	}
	if n := len(slices.DeleteFunc(slices.Clone(got), func(s string) bool { return s != "provision base" })); n != 1 {
		t.Errorf("base provisioned %d times: %q", n, got)
	}
	returns, cleanTop, cleanBase := j.index(t, "run base returns"), j.index(t, "cleanup top"), j.index(t, "cleanup base")
	if returns > cleanTop || cleanTop > cleanBase || cleanBase != len(got)-1 {
		t.Errorf("stop order: %q", got)
	}
	if logs.FilterMessage("a background loop stopped with an error").FilterField(zap.String("runner", "fennec_test.failing")).Len() != 1 {
		t.Errorf("the failing loop was not logged: %v", logs.All())
	}
}

// TestProvisionErrorStopsTheStart: a value that cannot set itself up stops
// the start, naming itself.
func TestProvisionErrorStopsTheStart(t *testing.T) {
	cfg := config.Default()
	cfg.Listen = ""
	cfg.Data = t.TempDir()
	mod := fennec.NewModule("brokentest", fennec.Provide(func() *broken { return &broken{} }))
	app, err := fennec.New(fennec.WithConfig(cfg), fennec.WithModules(mod), fennec.WithLogger(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	err = app.Start(context.Background())
	if err == nil || err.Error() != "fennec: provision *fennec_test.broken: no disk" {
		t.Fatalf("start: %v", err)
	}
	_ = app.Stop(context.Background())
}

type broken struct{}

func (*broken) Provision(context.Context) error { return errors.New("no disk") }

// TestMissingDependencyNamesTheModule: a module whose services need what no
// loaded module provides is refused with the module and the types, not
// fx's chain of constructors.
func TestMissingDependencyNamesTheModule(t *testing.T) {
	cfg := config.Default()
	cfg.Listen = ""
	cfg.Data = t.TempDir()
	type needsBoth struct {
		fennec.In
		Provided Provided
		Journal  *journal
		Maybe    *top `optional:"true"`
	}
	mod := fennec.NewModule("needy", fennec.Provide(func(needsBoth) *broken { return &broken{} }))
	want := "fennec: module needy needs fennec_test.Provided, *fennec_test.journal, which no loaded module provides"
	_, err := fennec.New(fennec.WithConfig(cfg), fennec.WithModules(mod), fennec.WithLogger(zap.NewNop()))
	if err == nil || err.Error() != want {
		t.Fatalf("New: %v\nwant %s", err, want)
	}
	if err := fennec.Validate(fennec.WithConfig(cfg), fennec.WithModules(mod), fennec.WithLogger(zap.NewNop())); err == nil || err.Error() != want {
		t.Fatalf("Validate: %v", err)
	}
}
