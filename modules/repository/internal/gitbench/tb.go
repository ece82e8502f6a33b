package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/fennec-forge/fennec/modules/repository/repotest"
)

// builderTB is the testing.TB repotest.Reference wants, outside a test: the
// embedded interface value is nil (it only supplies testing.TB's private
// method); every method the builder calls is overridden. Fatal and Skip
// panic with a tbStop that reference turns into an error.
type builderTB struct {
	testing.TB
	logf     func(format string, args ...any)
	failed   bool
	cleanups []func()
}

type tbStop struct {
	msg  string
	skip bool
}

func (t *builderTB) Helper()      {}
func (t *builderTB) Name() string { return "gitbench" }
func (t *builderTB) Failed() bool { return t.failed }
func (t *builderTB) Skipped() bool {
	return false
}
func (t *builderTB) Log(args ...any) { t.logf("%s", fmt.Sprint(args...)) }
func (t *builderTB) Logf(format string, args ...any) {
	t.logf(format, args...)
}
func (t *builderTB) Error(args ...any) { t.failed = true; t.Log(args...) }
func (t *builderTB) Errorf(format string, args ...any) {
	t.failed = true
	t.Logf(format, args...)
}
func (t *builderTB) Fail()    { t.failed = true }
func (t *builderTB) FailNow() { panic(tbStop{msg: "FailNow"}) }
func (t *builderTB) Fatal(args ...any) {
	panic(tbStop{msg: fmt.Sprint(args...)})
}
func (t *builderTB) Fatalf(format string, args ...any) {
	panic(tbStop{msg: fmt.Sprintf(format, args...)})
}
func (t *builderTB) Skip(args ...any) {
	panic(tbStop{msg: fmt.Sprint(args...), skip: true})
}
func (t *builderTB) Skipf(format string, args ...any) {
	panic(tbStop{msg: fmt.Sprintf(format, args...), skip: true})
}
func (t *builderTB) SkipNow()         { panic(tbStop{msg: "skipped", skip: true}) }
func (t *builderTB) Cleanup(f func()) { t.cleanups = append(t.cleanups, f) }
func (t *builderTB) Setenv(k, v string) {
	panic(tbStop{msg: "Setenv " + k + " is not supported outside tests"})
}

// reference builds (or finds in its cache) the reference repository of the
// given shape and returns its path.
func reference(shape repotest.Shape, logf func(string, ...any)) (dir string, err error) {
	tb := &builderTB{logf: logf}
	defer func() {
		for i := len(tb.cleanups) - 1; i >= 0; i-- {
			tb.cleanups[i]()
		}
	}()
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		stop, ok := r.(tbStop)
		if !ok {
			panic(r)
		}
		if stop.skip {
			err = fmt.Errorf("reference repository: skipped: %s", stop.msg)
		} else {
			err = fmt.Errorf("reference repository: %s", stop.msg)
		}
	}()
	dir = repotest.Reference(tb, shape)
	if tb.failed {
		return "", errors.New("reference repository: the builder reported errors")
	}
	return dir, nil
}
