package plugin

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestHCLogLevelsAndFields(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	l := newHCLog(zap.New(core).With(zap.String("plugin", "ldapmain")))

	l.Trace("t")
	l.Debug("d", "n", 1)
	l.Info("i", "err", errors.New("boom"), "timestamp", "2024-01-01T00:00:00Z")
	l.Warn("w", "odd")
	l.Error("e", "f", hclog.Fmt("%d-%s", 7, "x"))
	l.Log(hclog.Off, "never")
	l.Named("auth-ldap").With("k", "v").Info("from the plugin", "plugin", "/bin/auth-ldap")

	want := []struct {
		msg   string
		level zapcore.Level
	}{
		{"t", zapcore.DebugLevel}, {"d", zapcore.DebugLevel}, {"i", zapcore.InfoLevel},
		{"w", zapcore.WarnLevel}, {"e", zapcore.ErrorLevel}, {"from the plugin", zapcore.InfoLevel},
	}
	got := logs.AllUntimed()
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Message != w.msg || got[i].Level != w.level {
			t.Errorf("entry %d = %q at %s, want %q at %s", i, got[i].Message, got[i].Level, w.msg, w.level)
		}
		if got[i].ContextMap()["plugin"] != "ldapmain" {
			t.Errorf("entry %d lost the plugin field: %v", i, got[i].ContextMap())
		}
	}
	if m := got[1].ContextMap(); m["n"] != int64(1) {
		t.Errorf("debug fields: %v", m)
	}
	if m := got[2].ContextMap(); m["err"] != "boom" || m["timestamp"] != nil {
		t.Errorf("info fields (error as text, go-plugin's timestamp dropped): %v", m)
	}
	if m := got[3].ContextMap(); m["EXTRA_VALUE_AT_END"] != "odd" {
		t.Errorf("odd argument list: %v", m)
	}
	if m := got[4].ContextMap(); m["f"] != "7-x" {
		t.Errorf("hclog.Fmt: %v", m)
	}
	if m := got[5].ContextMap(); m["k"] != "v" || m["hclog.plugin"] != "/bin/auth-ldap" {
		t.Errorf("With: %v", m)
	}
	if n := l.Named("a").Named("b").Name(); n != "a.b" {
		t.Errorf("Named: %q", n)
	}
}

// go-plugin asks GetLevel to skip parsing lines nobody will see.
func TestHCLogLevelFollowsZap(t *testing.T) {
	for _, c := range []struct {
		zap  zapcore.Level
		want hclog.Level
	}{
		{zapcore.DebugLevel, hclog.Debug}, {zapcore.InfoLevel, hclog.Info},
		{zapcore.WarnLevel, hclog.Warn}, {zapcore.ErrorLevel, hclog.Error},
	} {
		core, logs := observer.New(c.zap)
		l := newHCLog(zap.New(core))
		if got := l.GetLevel(); got != c.want {
			t.Errorf("zap %s: GetLevel = %s, want %s", c.zap, got, c.want)
		}
		l.Debug("d")
		if c.zap > zapcore.DebugLevel && logs.Len() != 0 {
			t.Errorf("zap %s: debug line written", c.zap)
		}
	}
}

func TestStandardWriterSplitsLines(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	w := newHCLog(zap.New(core)).StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Warn})
	fmt.Fprint(w, "one\ntw")
	fmt.Fprint(w, "o\n\nthree\n")
	var msgs []string
	for _, e := range logs.AllUntimed() {
		msgs = append(msgs, e.Message)
		if e.Level != zapcore.WarnLevel {
			t.Errorf("%q at %s, want warn", e.Message, e.Level)
		}
	}
	if fmt.Sprint(msgs) != "[one two three]" {
		t.Errorf("lines = %q", msgs)
	}
}

func TestBackoffDoublesToTheCap(t *testing.T) {
	ms := time.Millisecond
	b := Backoff{}
	want := []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, 1600 * ms, 3200 * ms, 6400 * ms, 12800 * ms, 25600 * ms, 30 * time.Second, 30 * time.Second}
	for n, w := range want {
		if got := b.Delay(n); got != w {
			t.Errorf("Delay(%d) = %s, want %s", n, got, w)
		}
	}
	if got := b.Delay(1 << 20); got != 30*time.Second {
		t.Errorf("Delay(huge) = %s: must not overflow", got)
	}
	custom := Backoff{Min: 10 * ms, Max: 25 * ms}
	for n, w := range []time.Duration{10 * ms, 20 * ms, 25 * ms, 25 * ms} {
		if got := custom.Delay(n); got != w {
			t.Errorf("custom Delay(%d) = %s, want %s", n, got, w)
		}
	}
	if got := (Backoff{Min: time.Second, Max: ms}).Delay(3); got != time.Second {
		t.Errorf("Max below Min: %s", got)
	}
}
