package internal

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A trace as the shell executor and gitlab-runner write it: colours,
// a collapsed section with a header, a nested one, timestamps.
const sampleTrace = "\x1b[32;1mRunning\x1b[0;m\n" +
	"section_start:100:prepare[collapsed=true]\r\x1b[0K\x1b[36;1mPreparing\x1b[0;m\n" +
	"inside \x1b[31mred\n" +
	"still red\x1b[0m plain\n" +
	"section_end:103:prepare\r\x1b[0K\n" +
	"after <b>&\n"

func joinParts(parts []tracePart) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(string(p.HTML))
	}
	return b.String()
}

func TestRenderTraceWhole(t *testing.T) {
	parts, n, st := renderTrace([]byte(sampleTrace), traceState{}, true)
	got := joinParts(parts)
	if n != len(sampleTrace) || len(parts) != 1 || len(st.Open) != 0 || st.SGR != "" {
		t.Fatalf("n %d parts %d state %+v", n, len(parts), st)
	}
	for _, want := range []string{
		`<span class="term-fg32 term-fg1">Running</span>`,
		`<details class="ts" data-section="prepare"><summary><span class="tx"><span class="term-fg36 term-fg1">Preparing</span></span><span class="sd">00:03</span></summary>`,
		`inside <span class="term-fg31">red</span>`,
		`<span class="term-fg31">still red</span> plain`,
		`after &lt;b&gt;&amp;`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "section_") {
		t.Errorf("a marker shows:\n%s", got)
	}
}

// Rendered in chunks cut anywhere, with the state carried, the trace
// gives the same lines, the open section closed by a later chunk.
func TestRenderTraceChunks(t *testing.T) {
	cut := strings.Index(sampleTrace, "inside") + 3
	parts, n, st := renderTrace([]byte(sampleTrace[:cut]), traceState{}, false)
	if n != strings.Index(sampleTrace, "inside") || len(st.Open) != 1 || st.Open[0].Name != "prepare" {
		t.Fatalf("first chunk: n %d state %+v", n, st)
	}
	if got := joinParts(parts); !strings.Contains(got, `data-open`) {
		t.Fatalf("the open section is not marked open: %s", got)
	}
	st2 := decodeTraceState(st.encode())
	parts, n2, st3 := renderTrace([]byte(sampleTrace[n:strings.Index(sampleTrace, "still")+2]), st2, false)
	if st3.SGR != "31" || len(parts) != 1 || !strings.Contains(string(parts[0].HTML), "inside") {
		t.Fatalf("second chunk: %+v %+v", parts, st3)
	}
	parts, _, st4 := renderTrace([]byte(sampleTrace[n+n2:]), decodeTraceState(st3.encode()), true)
	if len(parts) != 2 || !strings.Contains(string(parts[0].HTML), `<span class="term-fg31">still red</span>`) ||
		len(parts[1].Close) != 1 || parts[1].Close[0] != "00:03" || !strings.Contains(string(parts[1].HTML), "after") || len(st4.Open) != 0 {
		t.Fatalf("third chunk: %+v %+v", parts, st4)
	}
}

func TestRenderTraceTimestamps(t *testing.T) {
	trace := "2024-01-01T10:00:00.123456Z 00O section_start:1:step_script\r\x1b[0K\n" +
		"2024-01-01T10:00:00.123457Z 00O+\x1b[0KExecuting step\n" +
		"2024-01-01T10:00:01.000000Z 01E oops\n" +
		"2024-01-01T10:00:02.000000Z 00O section_end:3:step_script\r\x1b[0K\n"
	got := joinParts(must3(renderTrace([]byte(trace), traceState{}, true)))
	for _, want := range []string{`<summary><span class="tx">Executing step</span><span class="sd">00:02</span>`,
		`<time class="tt" datetime="2024-01-01T10:00:01.000000Z">10:00:01</time><span class="tx">oops</span>`} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "00O") || strings.Contains(got, "01E") {
		t.Errorf("a prefix shows:\n%s", got)
	}
	// While the job runs, a bare timestamped start waits for its header.
	_, n, _ := renderTrace([]byte(trace[:strings.Index(trace, "2024-01-01T10:00:00.123457Z")]), traceState{}, false)
	if n != 0 {
		t.Fatalf("consumed %d of a bare section start", n)
	}
}

func must3(p []tracePart, _ int, _ traceState) []tracePart { return p }

func TestDecodeTraceStateRefusesHostileInput(t *testing.T) {
	for _, s := range []string{"%%%", traceState{SGR: "31m<script>"}.encode(), traceState{Open: []openSection{{Name: "a\"><b", Start: 1}}}.encode(),
		strings.Repeat("A", 5000)} {
		if st := decodeTraceState(s); st.SGR != "" || len(st.Open) != 0 {
			t.Errorf("%q decoded to %+v", s, st)
		}
	}
}

// bigTrace is about size bytes of coloured lines in sections of 500.
func bigTrace(size int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		if i%500 == 0 {
			if i > 0 {
				fmt.Fprintf(&b, "section_end:%d:s%d\r\x1b[0K\n", 1000+i, i-500)
			}
			fmt.Fprintf(&b, "section_start:%d:s%d\r\x1b[0K\x1b[36;1mStep %d\x1b[0;m\n", 1000+i, i, i)
		}
		fmt.Fprintf(&b, "\x1b[32mok\x1b[0m   line %d of the test output, with some \x1b[1mbold\x1b[0m words in it\n", i)
	}
	return []byte(b.String())
}

// BenchmarkRenderTrace renders a 4 MiB trace and the page's 512 KiB
// window of it, reporting CPU time (the machine is shared: wall time is
// noise).
func BenchmarkRenderTrace(b *testing.B) {
	data := bigTrace(4 << 20)
	for _, size := range []int{4 << 20, traceWindow} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			in := data[len(data)-size:]
			html := 0
			cpu0 := cpuTime(b)
			for i := 0; i < b.N; i++ {
				parts, _, _ := renderTrace(in, traceState{}, true)
				html = len(joinParts(parts))
			}
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(html), "html-bytes")
		})
	}
}

func cpuTime(b testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
