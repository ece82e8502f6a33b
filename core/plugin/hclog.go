package plugin

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// zapHCLog is an hclog.Logger writing into zap. go-plugin logs through it
// twice: its own messages, and every line the plugin writes to stderr (hclog
// JSON, re-emitted with the plugin's level and fields). Trace maps to Debug,
// as zap has no trace level.
type zapHCLog struct {
	z       *zap.Logger
	name    string
	implied []any
}

// newHCLog adapts z; callers put the plugin's name on z as a field.
func newHCLog(z *zap.Logger) hclog.Logger {
	return &zapHCLog{z: z}
}

func zapLevel(l hclog.Level) zapcore.Level {
	switch l {
	case hclog.Trace, hclog.Debug:
		return zapcore.DebugLevel
	case hclog.Warn:
		return zapcore.WarnLevel
	case hclog.Error:
		return zapcore.ErrorLevel
	default:
		return zapcore.InfoLevel
	}
}

// fields turns hclog's key/value list into zap fields. go-plugin appends a
// "timestamp" of the plugin's line; zap stamps its own, so it is dropped. The
// key "plugin" is the host's (the configured name); theirs is renamed.
func fields(args []any) []zap.Field {
	out := make([]zap.Field, 0, len(args)/2+1)
	for i := 0; i < len(args); i += 2 {
		if i+1 == len(args) {
			out = append(out, zap.Any("EXTRA_VALUE_AT_END", args[i]))
			break
		}
		key, ok := args[i].(string)
		if !ok {
			key = fmt.Sprint(args[i])
		}
		switch key {
		case "timestamp":
			continue
		case "plugin": // ours: the configured name (go-plugin uses it for the path)
			key = "hclog.plugin"
		}
		switch v := args[i+1].(type) {
		case error:
			out = append(out, zap.String(key, v.Error()))
		case hclog.Format:
			if len(v) > 0 {
				if f, ok := v[0].(string); ok {
					out = append(out, zap.String(key, fmt.Sprintf(f, v[1:]...)))
					continue
				}
			}
			out = append(out, zap.Any(key, []any(v)))
		default:
			out = append(out, zap.Any(key, v))
		}
	}
	return out
}

func (l *zapHCLog) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Off {
		return
	}
	zl := zapLevel(level)
	if ce := l.z.Check(zl, msg); ce != nil {
		ce.Write(fields(args)...)
	}
}

func (l *zapHCLog) Trace(msg string, args ...any) { l.Log(hclog.Trace, msg, args...) }
func (l *zapHCLog) Debug(msg string, args ...any) { l.Log(hclog.Debug, msg, args...) }
func (l *zapHCLog) Info(msg string, args ...any)  { l.Log(hclog.Info, msg, args...) }
func (l *zapHCLog) Warn(msg string, args ...any)  { l.Log(hclog.Warn, msg, args...) }
func (l *zapHCLog) Error(msg string, args ...any) { l.Log(hclog.Error, msg, args...) }

func (l *zapHCLog) IsTrace() bool { return l.z.Core().Enabled(zapcore.DebugLevel) }
func (l *zapHCLog) IsDebug() bool { return l.z.Core().Enabled(zapcore.DebugLevel) }
func (l *zapHCLog) IsInfo() bool  { return l.z.Core().Enabled(zapcore.InfoLevel) }
func (l *zapHCLog) IsWarn() bool  { return l.z.Core().Enabled(zapcore.WarnLevel) }
func (l *zapHCLog) IsError() bool { return l.z.Core().Enabled(zapcore.ErrorLevel) }

func (l *zapHCLog) ImpliedArgs() []any { return l.implied }

func (l *zapHCLog) With(args ...any) hclog.Logger {
	return &zapHCLog{z: l.z.With(fields(args)...), name: l.name, implied: append(l.implied[:len(l.implied):len(l.implied)], args...)}
}

func (l *zapHCLog) Name() string { return l.name }

func (l *zapHCLog) Named(name string) hclog.Logger {
	if l.name != "" {
		name = l.name + "." + name
	}
	return l.ResetNamed(name)
}

func (l *zapHCLog) ResetNamed(name string) hclog.Logger {
	return &zapHCLog{z: l.z, name: name, implied: l.implied}
}

// SetLevel does nothing: the application's zap configuration decides.
func (l *zapHCLog) SetLevel(hclog.Level) {}

// GetLevel tells go-plugin which plugin lines are worth parsing at all.
func (l *zapHCLog) GetLevel() hclog.Level {
	switch {
	case l.IsDebug():
		return hclog.Debug
	case l.IsInfo():
		return hclog.Info
	case l.IsWarn():
		return hclog.Warn
	case l.IsError():
		return hclog.Error
	}
	return hclog.Off
}

func (l *zapHCLog) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(l.StandardWriter(opts), "", 0)
}

func (l *zapHCLog) StandardWriter(opts *hclog.StandardLoggerOptions) io.Writer {
	level := hclog.Info
	if opts != nil && opts.ForceLevel != hclog.NoLevel {
		level = opts.ForceLevel
	}
	return &lineWriter{emit: func(line string) { l.Log(level, line) }}
}

const maxLine = 64 << 10

// lineWriter calls emit once per complete line written to it (the plugin's
// forwarded stdout and stderr, standard loggers).
type lineWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	emit func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil { // no newline yet: keep the partial line, within reason
			w.buf.Reset()
			if len(line) >= maxLine {
				w.emit(line)
			} else {
				w.buf.WriteString(line)
			}
			return len(p), nil
		}
		if s := strings.TrimRight(line, "\r\n"); s != "" {
			w.emit(s)
		}
	}
}
