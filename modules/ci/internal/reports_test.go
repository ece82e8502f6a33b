package internal

import (
	"bytes"
	"compress/gzip"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseDotenv(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []dotenvVariable
		err      string
	}{
		{"empty", "", nil, ""},
		{"lines", "A=1\nB = two words \n", []dotenvVariable{{"A", "1"}, {"B", "two words"}}, ""},
		{"crlf", "A=1\r\nB=2\r\n", []dotenvVariable{{"A", "1"}, {"B", "2"}}, ""},
		{"first equals splits", "URL=a=b", []dotenvVariable{{"URL", "a=b"}}, ""},
		{"quotes kept", `Q="x y"`, []dotenvVariable{{"Q", `"x y"`}}, ""},
		{"later wins", "A=1\nA=2", []dotenvVariable{{"A", "2"}}, ""},
		{"empty value", "A=", []dotenvVariable{{"A", ""}}, ""},
		{"blank line", "A=1\n\nB=2", nil, "Invalid Format"},
		{"comment", "# note\nA=1", nil, "Invalid Format"},
		{"commented key", "#A=1", nil, "Validation failed: Key can contain only letters, digits and '_'."},
		{"bad key", "A-B=1", nil, "Validation failed: Key can contain only letters, digits and '_'."},
		{"empty key", "=1", nil, "Validation failed: Key can contain only letters, digits and '_'."},
		{"not utf-8", "A=\xff", nil, "Invalid Format"},
		{"too big", "A=" + strings.Repeat("x", maxDotenvBytes), nil, "Dotenv Artifact Too Big. Maximum Allowable Size: 5120"},
		{"too many", manyVariables(maxDotenvVariables + 1), nil, "Dotenv files cannot have more than 150 variables"},
		{"three", manyVariables(3), []dotenvVariable{{"V0", "1"}, {"V1", "1"}, {"V2", "1"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseDotenv([]byte(tc.in))
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v %v, want %v", got, err, tc.want)
			}
		})
	}
}

func manyVariables(n int) string {
	var b strings.Builder
	for i := range n {
		// Distinct keys: V, a digit, then as many x as tens.
		b.WriteString("V" + string(rune('0'+i%10)) + strings.Repeat("x", i/10) + "=1\n")
	}
	return b.String()
}

func TestParseJUnit(t *testing.T) {
	str := func(s string) *string { return &s }
	valid := `<?xml version="1.0"?>
<testsuites><testsuite name="s">
  <testcase classname="c" name="ok" time="1.5"/>
  <testcase classname="c" name="bad" time="x"><failure message="m">trace</failure></testcase>
  <testcase classname="c" name="err"><error message="only message"/></testcase>
  <testcase classname="c" name="skip" file="f.go"><skipped/></testcase>
</testsuite></testsuites>`
	got, err := parseJUnit([]byte(valid), 10)
	want := []TestCase{
		{Status: "success", Name: "ok", Classname: "c", ExecutionTime: 1.5},
		{Status: "failed", Name: "bad", Classname: "c", SystemOutput: str("trace")},
		{Status: "error", Name: "err", Classname: "c", SystemOutput: str("only message")},
		{Status: "skipped", Name: "skip", Classname: "c", File: str("f.go"), SystemOutput: str("")},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v %v", got, err)
	}
	if _, err := parseJUnit([]byte(valid), 3); !errors.Is(err, errTooManyTestCases) {
		t.Fatalf("4 cases, at most 3: %v", err)
	}
	laughs := `<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">` +
		`<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><testsuite><testcase name="&c;"/></testsuite>`
	external := `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><testsuite><testcase name="&e;"/></testsuite>`
	for name, in := range map[string]string{
		"billion laughs":    laughs,
		"external entity":   external,
		"malformed":         `<testsuite><testcase name="a"></testsuite>`,
		"unclosed":          `<testsuite><testcase name="a">`,
		"not xml":           "\x00\x01binary",
		"deep and unclosed": strings.Repeat("<a>", 100000),
	} {
		if _, err := parseJUnit([]byte(in), 10); err == nil || !strings.HasPrefix(err.Error(), "JUnit XML parsing failed: ") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if got, err := parseJUnit(nil, 10); err != nil || got != nil {
		t.Fatalf("empty: %v %v", got, err)
	}
}

func gz(parts ...[]byte) []byte {
	var b bytes.Buffer
	for _, p := range parts {
		zw := gzip.NewWriter(&b)
		zw.Write(p)
		zw.Close()
	}
	return b.Bytes()
}

func TestInflateMembers(t *testing.T) {
	got, err := inflateMembers(bytes.NewReader(gz([]byte("one"), []byte("two"))), 100)
	if err != nil || len(got) != 2 || string(got[0]) != "one" || string(got[1]) != "two" {
		t.Fatalf("members: %q %v", got, err)
	}
	// A bomb: 64 MiB of zeros in a few KiB stops at the limit.
	bomb := gz(make([]byte, 64<<20))
	if len(bomb) > 128<<10 {
		t.Fatalf("bomb of %d bytes", len(bomb))
	}
	if _, err := inflateMembers(bytes.NewReader(bomb), 1<<20); !errors.Is(err, errReportTooLarge) {
		t.Fatalf("bomb: %v", err)
	}
	// The limit counts all members together.
	if _, err := inflateMembers(bytes.NewReader(gz([]byte("abc"), []byte("def"))), 5); !errors.Is(err, errReportTooLarge) {
		t.Fatalf("two members past the limit: %v", err)
	}
	if _, err := inflateMembers(strings.NewReader("not gzip"), 100); err == nil {
		t.Fatal("not gzip: no error")
	}
	if got, err := inflateMembers(strings.NewReader(""), 100); err != nil || got != nil {
		t.Fatalf("empty: %v %v", got, err)
	}
}

func TestMatchesAny(t *testing.T) {
	for _, tc := range []struct {
		name     string
		patterns []string
		want     bool
	}{
		{"report.xml", []string{"report.xml"}, true},
		{"report.xml", []string{"./report.xml"}, true},
		{"out/a.xml", []string{"out/*.xml"}, true},
		{"out/sub/a.xml", []string{"out/"}, true},
		{"out/sub/a.xml", []string{"out/*.xml"}, false},
		{"other.xml", []string{"report.xml"}, false},
	} {
		if got := matchesAny(tc.name, tc.patterns); got != tc.want {
			t.Errorf("%s %v: %v", tc.name, tc.patterns, got)
		}
	}
}

func TestParseDotenvMostAllowed(t *testing.T) {
	got, err := parseDotenv([]byte(manyVariables(maxDotenvVariables)))
	if err != nil || len(got) != maxDotenvVariables {
		t.Fatalf("%d variables, %v", len(got), err)
	}
}

// The report readers never panic and keep their bounds whatever the
// bytes: at most max cases, a dotenv within GitLab's limits.
func FuzzReports(f *testing.F) {
	f.Add([]byte(`<testsuite><testcase name="a"><failure>x</failure></testcase></testsuite>`))
	f.Add([]byte("A=1\nB=2\n"))
	f.Add([]byte(`<!DOCTYPE l [<!ENTITY a "aa">]><testcase name="&a;"/>`))
	f.Add(gz([]byte("A=1")))
	f.Fuzz(func(t *testing.T, data []byte) {
		if cases, err := parseJUnit(data, 3); err == nil && len(cases) > 3 {
			t.Fatalf("%d cases past the bound", len(cases))
		}
		if vars, err := parseDotenv(data); err == nil && (len(vars) > maxDotenvVariables || len(data) >= maxDotenvBytes) {
			t.Fatalf("dotenv past its bounds: %d variables of %d bytes", len(vars), len(data))
		}
		if members, err := inflateMembers(bytes.NewReader(data), 1<<10); err == nil {
			n := 0
			for _, m := range members {
				n += len(m)
			}
			if n > 1<<10 || len(members) > maxReportFiles {
				t.Fatalf("inflated %d bytes in %d members past the bound", n, len(members))
			}
		}
	})
}

// A report of many cases stops at the bound, without reading on.
func TestParseJUnitManyCases(t *testing.T) {
	data := []byte("<testsuite>" + strings.Repeat(`<testcase name="a"/>`, 200_000) + "</testsuite>")
	if _, err := parseJUnit(data, maxTestCases); !errors.Is(err, errTooManyTestCases) {
		t.Fatalf("200,000 cases: %v", err)
	}
}
