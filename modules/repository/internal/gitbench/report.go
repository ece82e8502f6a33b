package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// report prints the tables: warm medians with the targets, cold first runs,
// and the initial push of the whole repository.
func (b *bench) report(w io.Writer, servers []server, chosen []scenario, results map[string]map[string]*outcome, setupErr map[string]error) {
	var git, fen server
	for _, s := range servers {
		switch s.key() {
		case "git":
			git = s
		case "fennec":
			fen = s
		}
	}
	fmt.Fprintf(w, "\nGit over smart HTTP: Fennec against C git (git http-backend)\n")
	fmt.Fprintf(w, "Reference: %s: %d commits, %.1f MiB\n", b.ref, b.commits, mib(dirSize(b.ref)))
	fmt.Fprintf(w, "Client: %s, default protocol (asks for v2; git push always speaks v0)\n", gitVersion())
	for _, s := range []server{git, fen} {
		if s == nil {
			continue
		}
		if err := setupErr[s.key()]; err != nil {
			fmt.Fprintf(w, "%s: setup failed: %v\n", s.name(), err)
			continue
		}
		for _, n := range s.notes() {
			fmt.Fprintln(w, n)
		}
	}
	fmt.Fprintf(w, "Figures: wall time of the client command; the server's CPU (user+sys) and peak RSS.\n")

	header := func(title string, target bool) {
		fmt.Fprintf(w, "\n%s\n", title)
		fmt.Fprintf(w, "%-30s %29s   %29s   %29s\n", "", center("wall", 29), center("server CPU", 29), center("server peak RSS", 29))
		line := fmt.Sprintf("%-30s %9s %9s %9s   %9s %9s %9s   %9s %9s %9s", "scenario", "C git", "Fennec", "ratio", "C git", "Fennec", "ratio", "C git", "Fennec", "ratio")
		if target {
			line += "   target"
		}
		fmt.Fprintln(w, line)
	}
	row := func(title string, g, f *sample, gErr, fErr error, target bool) {
		cells := func(get func(*sample) (float64, string)) string {
			gv, gs := value(g, gErr, get)
			fv, fs := value(f, fErr, get)
			ratio := "-"
			if g != nil && f != nil && gErr == nil && fErr == nil && gv > 0 {
				ratio = fmt.Sprintf("%.2fx", fv/gv)
			}
			return fmt.Sprintf("%9s %9s %9s", gs, fs, ratio)
		}
		line := fmt.Sprintf("%-30s %s   %s   %s", title,
			cells(func(s *sample) (float64, string) { return s.wall.Seconds(), secs(s.wall) }),
			cells(func(s *sample) (float64, string) { return s.cpu.Seconds(), secs(s.cpu) }),
			cells(func(s *sample) (float64, string) { return float64(s.rss), fmt.Sprintf("%.0f MiB", mib(s.rss)) }))
		if target {
			line += "   " + verdict(g, f, gErr, fErr)
		}
		fmt.Fprintln(w, line)
	}
	get := func(key string, s server) *outcome {
		if s == nil {
			return nil
		}
		return results[key][s.key()]
	}
	errOf := func(o *outcome) error {
		if o == nil {
			return nil
		}
		return o.err
	}

	header(fmt.Sprintf("Median of %d warm runs", b.runs), true)
	for _, sc := range chosen {
		og, of := get(sc.key, git), get(sc.key, fen)
		var g, f *sample
		if og != nil && og.err == nil && len(og.warm) > 0 {
			m := medianSample(og.warm)
			g = &m
		}
		if of != nil && of.err == nil && len(of.warm) > 0 {
			m := medianSample(of.warm)
			f = &m
		}
		row(sc.title, g, f, errOf(og), errOf(of), true)
	}

	header("Cold first run (a fresh server process; Fennec restarted just before)", false)
	for _, sc := range chosen {
		og, of := get(sc.key, git), get(sc.key, fen)
		var g, f *sample
		if og != nil {
			g = og.cold
		}
		if of != nil {
			f = of.cold
		}
		row(sc.title, g, f, errOf(og), errOf(of), false)
	}

	var gp, fp *sample
	if git != nil && setupErr["git"] == nil {
		gp = git.initialPush()
	}
	if fen != nil && setupErr["fennec"] == nil {
		fp = fen.initialPush()
	}
	if gp != nil || fp != nil {
		header("Initial push of the whole repository into an empty one (git push --mirror, one run)", false)
		row("initial push", gp, fp, setupErr["git"], setupErr["fennec"], false)
	}
	fmt.Fprintf(w, "\nTarget: every scenario within %.1fx of C git's wall time, the server's peak RSS within %.0fx.\n", wallTarget, rssTarget)
	fmt.Fprintln(w, "C git's RSS is its largest single process (getrusage); Fennec's is its VmHWM (child processes, if any, not included).")
}

func value(s *sample, err error, get func(*sample) (float64, string)) (float64, string) {
	if err != nil {
		return 0, "error"
	}
	if s == nil {
		return 0, "-"
	}
	return get(s)
}

func verdict(g, f *sample, gErr, fErr error) string {
	if gErr != nil || fErr != nil {
		return "error"
	}
	if g == nil || f == nil || g.wall <= 0 || g.rss <= 0 {
		return "-"
	}
	var missed []string
	if r := f.wall.Seconds() / g.wall.Seconds(); r > wallTarget {
		missed = append(missed, fmt.Sprintf("wall %.2fx > %.1fx", r, wallTarget))
	}
	if r := float64(f.rss) / float64(g.rss); r > rssTarget {
		missed = append(missed, fmt.Sprintf("RSS %.2fx > %.0fx", r, rssTarget))
	}
	if len(missed) == 0 {
		return "ok"
	}
	return "MISSED: " + strings.Join(missed, ", ")
}

func secs(d time.Duration) string {
	return fmt.Sprintf("%.3fs", d.Seconds())
}

func center(s string, width int) string {
	pad := width - len(s)
	if pad <= 0 {
		return s
	}
	s = strings.Repeat("-", pad/2-1) + " " + s + " " + strings.Repeat("-", pad-pad/2-1)
	return s
}
