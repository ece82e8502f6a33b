package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	fennec "github.com/fennec-forge/fennec/core"
)

// newProgress reports to w: a progress bar with bytes and items when w is
// a terminal, plain lines otherwise (one when a phase begins, one per tenth
// of its items, one when it ends).
func newProgress(w io.Writer) fennec.Progress {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return &barProgress{w: w}
	}
	return &lineProgress{w: w}
}

// lineProgress writes plain lines, for logs and pipes.
type lineProgress struct {
	w                      io.Writer
	phase                  string
	items, bytes           int64
	doneItems, doneBytes   int64
	nextReport, reportStep int64
	start                  time.Time
}

func (p *lineProgress) Begin(phase string, items, bytes int64) {
	p.phase, p.items, p.bytes, p.doneItems, p.doneBytes, p.start = phase, items, bytes, 0, 0, time.Now()
	p.reportStep = max(1, items/10)
	p.nextReport = p.reportStep
	fmt.Fprintf(p.w, "%s: %d items%s\n", phase, items, p.size(bytes))
}

func (p *lineProgress) Advance(items, bytes int64) {
	p.doneItems += items
	p.doneBytes += bytes
	if items > 0 && p.doneItems >= p.nextReport && p.doneItems < p.items {
		p.nextReport += p.reportStep
		fmt.Fprintf(p.w, "%s: %d/%d items%s\n", p.phase, p.doneItems, p.items, p.size(p.doneBytes))
	}
}

func (p *lineProgress) End() {
	if p.phase == "" {
		return
	}
	fmt.Fprintf(p.w, "%s: done, %d items%s in %s\n", p.phase, p.doneItems, p.size(p.doneBytes), time.Since(p.start).Round(time.Millisecond))
	p.phase = ""
}

// size is ", n of total bytes" for a phase that counts bytes.
func (p *lineProgress) size(n int64) string {
	switch {
	case p.bytes == 0:
		return ""
	case n == p.bytes:
		return ", " + humanBytes(n)
	}
	return ", " + humanBytes(n) + " of " + humanBytes(p.bytes)
}

func (p *lineProgress) Notef(format string, args ...any) {
	fmt.Fprintf(p.w, format+"\n", args...)
}

// barProgress draws a bar of bytes (of items when a phase has no bytes),
// with the items counted in its description.
type barProgress struct {
	w            io.Writer
	bar          *progressbar.ProgressBar
	phase        string
	items, done  int64
	byBytes      bool
	lastDescribe time.Time
}

func (p *barProgress) Begin(phase string, items, bytes int64) {
	p.End()
	p.phase, p.items, p.done = phase, items, 0
	p.byBytes = bytes > 0
	total := items
	if p.byBytes {
		total = bytes
	}
	p.bar = progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(p.describe()),
		progressbar.OptionShowBytes(p.byBytes),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
	)
}

func (p *barProgress) describe() string {
	return fmt.Sprintf("%s (%d/%d items)", p.phase, p.done, p.items)
}

func (p *barProgress) Advance(items, bytes int64) {
	if p.bar == nil {
		return
	}
	p.done += items
	if p.byBytes {
		_ = p.bar.Add64(bytes)
	} else {
		_ = p.bar.Add64(items)
	}
	if items > 0 && time.Since(p.lastDescribe) > 100*time.Millisecond {
		p.lastDescribe = time.Now()
		p.bar.Describe(p.describe())
	}
}

func (p *barProgress) End() {
	if p.bar == nil {
		return
	}
	p.bar.Describe(p.describe())
	_ = p.bar.Finish()
	fmt.Fprintln(p.w)
	p.bar = nil
}

func (p *barProgress) Notef(format string, args ...any) {
	if p.bar != nil {
		_ = p.bar.Clear()
	}
	fmt.Fprintf(p.w, format+"\n", args...)
}

// humanBytes is n in B, KiB, MiB, GiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
