package log

import (
	"fmt"
	"io"
	"os"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"
)

// Options choose the level, the format and where lines go.
type Options struct {
	// Level: debug, info, warn or error. Empty means info.
	Level string
	// Format: console, json, or empty to pick console on a terminal.
	Format string
	// Output defaults to standard error.
	Output io.Writer
}

// New builds a logger from opts.
func New(opts Options) (*zap.Logger, error) {
	level := zapcore.InfoLevel
	if opts.Level != "" {
		if err := level.UnmarshalText([]byte(strings.ToLower(opts.Level))); err != nil {
			return nil, fmt.Errorf("log: unknown level %q (use debug, info, warn or error)", opts.Level)
		}
	}
	out := opts.Output
	if out == nil {
		out = os.Stderr
	}
	format := strings.ToLower(opts.Format)
	if format == "" {
		format = "json"
		if f, ok := out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			format = "console"
		}
	}
	var enc zapcore.Encoder
	switch format {
	case "json":
		cfg := zap.NewProductionEncoderConfig()
		cfg.EncodeTime = timeEncoder
		enc = zapcore.NewJSONEncoder(cfg)
	case "console":
		cfg := zap.NewDevelopmentEncoderConfig()
		cfg.EncodeTime = zapcore.TimeEncoderOfLayout("15:04:05.000")
		enc = zapcore.NewConsoleEncoder(cfg)
	default:
		return nil, fmt.Errorf("log: unknown format %q (use console or json)", opts.Format)
	}
	core := zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(out)), level)
	return zap.New(core, zap.ErrorOutput(zapcore.Lock(zapcore.AddSync(out)))), nil
}
