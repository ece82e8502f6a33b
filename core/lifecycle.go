package fennec

// The module lifecycle, written once: a value a module provides (with
// Provide) takes part in the app's start and stop by implementing one of
// the small interfaces below, found by type assertion. The order is
// ARCHITECTURE.md's ("The module lifecycle"):
//
//	New:   store opened, buckets created, migrations run, every provided
//	       value constructed (dependencies first)
//	Start: Provision, in construction order -> the event bus starts ->
//	       every Run starts in its goroutine -> requests are served
//	Stop:  requests drained -> every Run's context cancelled, and waited
//	       for -> the bus stops -> Cleanup, in reverse construction
//	       order -> the store closes

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"go.uber.org/fx"
	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/events"
	"github.com/fennec-forge/fennec/core/store"
)

// Provisioner is a value that sets itself up once the store is migrated
// and before the bus delivers events or requests are served: creating the
// first administrator, replaying a journal, recovering work a crash left
// half done. An error stops the start.
type Provisioner interface {
	Provision(ctx context.Context) error
}

// Runner is a value with a background loop. Run starts after every
// Provision and the event bus, and must return once ctx is cancelled
// (at stop, before the bus and the store stop); the app waits for it. An
// error it returns before that is logged: the loop is over, the app goes
// on.
type Runner interface {
	Run(ctx context.Context) error
}

// EveryNode marks a Runner (or Provisioner) that runs on every node when
// several nodes share one store (a listener, the workers of a shared work
// queue). Any other Runner runs on one node at a time: the node holding
// the leader lease (cluster.go), which also delivers the outbox; and any
// other Provisioner runs on that node when it takes the lease, since it
// recovers what the previous holder left. With a store of one process
// (bbolt) every node is the only one and the marker changes nothing.
type EveryNode interface {
	EveryNode()
}

// CleanerUpper is a value that holds something to release at stop (a
// listener, a cache file) once every Run has returned and the bus has
// stopped, before the store closes.
type CleanerUpper interface {
	Cleanup() error
}

// Provide adds constructors of a module's values. Their parameters are
// other values of the app; every value they return is constructed when the
// app is assembled (so a value nothing asks for still runs its loop) and
// takes part in the lifecycle through the interfaces it implements.
func Provide(ctors ...any) Part {
	var opts []fx.Option
	for _, c := range ctors {
		opts = append(opts, fx.Provide(withLifecycle(c)), fx.Invoke(constructAll(c)))
	}
	return withNeeds(fx.Options(opts...), ctors...)
}

var (
	errorType     = reflect.TypeFor[error]()
	lifecycleType = reflect.TypeFor[*lifecycle]()
)

// withLifecycle is ctor with one more parameter, the app's lifecycle, to
// which it hands each value ctor returns.
func withLifecycle(ctor any) any {
	fv := reflect.ValueOf(ctor)
	ft := fv.Type()
	if ft.Kind() != reflect.Func || ft.IsVariadic() || ft.NumOut() == 0 {
		panic(fmt.Sprintf("fennec.Provide: %v is not a constructor (a function returning values)", ft))
	}
	in := make([]reflect.Type, 0, ft.NumIn()+1)
	for i := range ft.NumIn() {
		in = append(in, ft.In(i))
	}
	in = append(in, lifecycleType)
	out := make([]reflect.Type, ft.NumOut())
	for i := range out {
		out[i] = ft.Out(i)
	}
	return reflect.MakeFunc(reflect.FuncOf(in, out, false), func(args []reflect.Value) []reflect.Value {
		lc := args[len(args)-1].Interface().(*lifecycle)
		res := fv.Call(args[:len(args)-1])
		if last := res[len(res)-1]; last.Type() == errorType && !last.IsNil() {
			return res
		}
		for _, r := range res {
			if r.Type() != errorType {
				lc.add(r.Interface())
			}
		}
		return res
	}).Interface()
}

// constructAll is a function that asks for every value ctor returns.
func constructAll(ctor any) any {
	ft := reflect.TypeOf(ctor)
	var in []reflect.Type
	for i := range ft.NumOut() {
		if ft.Out(i) != errorType {
			in = append(in, ft.Out(i))
		}
	}
	return reflect.MakeFunc(reflect.FuncOf(in, nil, false), func([]reflect.Value) []reflect.Value { return nil }).Interface()
}

// lifecycle holds the app's provisioners, runners and cleaner-uppers in
// construction order.
type lifecycle struct {
	log  *zap.Logger
	mu   sync.Mutex
	seen map[any]bool
	// parts are the values in construction order, each once (a service
	// also provided under its contract's interface is one value).
	parts []any

	cancel context.CancelFunc
	runs   sync.WaitGroup

	// cluster is set when the store is shared (start).
	cluster *cluster
}

func newLifecycle(log *zap.Logger) *lifecycle {
	return &lifecycle{log: log, seen: map[any]bool{}}
}

func (l *lifecycle) add(v any) {
	if v == nil {
		return
	}
	switch v.(type) {
	case Provisioner, Runner, CleanerUpper:
	default:
		return
	}
	if !reflect.TypeOf(v).Comparable() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.seen[v] {
		l.seen[v] = true
		l.parts = append(l.parts, v)
	}
}

// start provisions, starts the bus, then the runners. On a shared store
// the leader's part (the bus, the runners and provisioners that are not
// EveryNode) waits for the leader lease (cluster.go).
func (l *lifecycle) start(ctx context.Context, bus *events.Bus, c *cluster) error {
	if c != nil {
		return l.startShared(ctx, bus, c)
	}
	for _, p := range l.parts {
		if pr, ok := p.(Provisioner); ok {
			if err := pr.Provision(ctx); err != nil {
				return fmt.Errorf("provision %T: %w", p, err)
			}
		}
	}
	bus.Start()
	runCtx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	for _, p := range l.parts {
		if r, ok := p.(Runner); ok {
			l.runs.Add(1)
			go func() {
				defer l.runs.Done()
				l.run(runCtx, r)
			}()
		}
	}
	return nil
}

// run runs one Runner until it returns, logging an error it ends with.
func (l *lifecycle) run(ctx context.Context, r Runner) {
	if err := r.Run(ctx); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, store.ErrLeaseLost) {
		l.log.Error("a background loop stopped with an error", zap.String("runner", fmt.Sprintf("%T", r)), zap.Error(err))
	}
}

// stop cancels the runners and waits for them (bounded by ctx), stops the
// bus, then cleans up in reverse order.
func (l *lifecycle) stop(ctx context.Context, bus *events.Bus) error {
	var errs []error
	if l.cluster != nil {
		if err := l.cluster.stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if l.cancel != nil {
		l.cancel()
		done := make(chan struct{})
		go func() { l.runs.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			errs = append(errs, fmt.Errorf("fennec: background loops did not stop in time: %w", ctx.Err()))
		}
	}
	if err := bus.Stop(ctx); err != nil {
		errs = append(errs, err)
	}
	for i := len(l.parts) - 1; i >= 0; i-- {
		if c, ok := l.parts[i].(CleanerUpper); ok {
			if err := c.Cleanup(); err != nil {
				errs = append(errs, fmt.Errorf("fennec: clean up %T: %w", c, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Every is the body of a Runner that does one thing periodically: do runs
// first after first, then every every, each time with a context bounded by
// timeout, until ctx ends. Each module's sweep or sync need not write its
// own timer loop.
func Every(ctx context.Context, first, every, timeout time.Duration, do func(ctx context.Context)) error {
	timer := time.NewTimer(first)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		runCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		do(runCtx)
		cancel()
		timer.Reset(every)
	}
}
