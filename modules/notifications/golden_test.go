package notifications_test

import (
	"bytes"
	"flag"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest"
)

// update rewrites the golden mails under testdata/ from what the tests
// receive, instead of comparing with them:
//
//	go test ./modules/notifications/ -run 'Recipients|Mail|Subscriptions|SMTPFromEnvironment' -update
//
// Review the diff of testdata/ before committing it.
var update = flag.Bool("update", false, "rewrite the golden mail files in testdata/")

// goldenMail compares the mail of mails sent to the address to with
// testdata/<name>.eml.txt: the envelope, every header, and each MIME
// part's headers and decoded body, after normaliseMail. The tests'
// exact assertions say which values matter; the golden file pins the
// whole mail, so a header that appears, goes or changes form shows.
func goldenMail(t *testing.T, name string, mails []received, to string, known map[string]string) {
	t.Helper()
	var m *received
	for i := range mails {
		if slices.Contains(mails[i].To, to) {
			m = &mails[i]
		}
	}
	if m == nil {
		t.Fatalf("golden %s: no mail to %s among %v", name, to, recipients(mails))
	}
	got := normaliseMail(t, mailText(t, *m), known)
	file := filepath.Join("testdata", name+".eml.txt")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (- golden, + got; go test -update rewrites it):\n%s", file, fennectest.LineDiff(string(want), got))
	}
}

// mailText lays a mail out for reading: envelope, headers sorted by name,
// then each part with its headers and its body as the reader sees it
// (quoted-printable decoded).
func mailText(t *testing.T, m received) string {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(m.Raw))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("Envelope-From: " + m.From + "\n")
	b.WriteString("Envelope-To: " + strings.Join(m.To, ", ") + "\n")
	head, _, _ := bytes.Cut(m.Raw, []byte("\r\n\r\n"))
	writeHeaders(&b, string(head))
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	// The raw reader: the golden file shows the transfer encoding a
	// part declares, and the body decoded.
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for n := 1; ; n++ {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		body := string(raw)
		if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
			dec, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(raw)))
			if err != nil {
				t.Fatalf("part %d: %v", n, err)
			}
			body = string(dec)
		}
		b.WriteString("\n--- part " + strconv.Itoa(n) + "\n")
		names := make([]string, 0, len(p.Header))
		for k := range p.Header {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			b.WriteString(k + ": " + strings.Join(p.Header[k], ", ") + "\n")
		}
		b.WriteString("\n" + strings.ReplaceAll(body, "\r\n", "\n"))
		if !strings.HasSuffix(body, "\n") {
			b.WriteString("\n(no newline at the end)\n")
		}
	}
	return b.String()
}

// writeHeaders writes a raw header block's fields unfolded, sorted by
// name, each name as the sender spelt it (net/mail would canonicalise
// Message-ID to Message-Id).
func writeHeaders(b *strings.Builder, head string) {
	var fields []string
	for _, line := range strings.Split(head, "\r\n") {
		if (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")) && len(fields) > 0 {
			fields[len(fields)-1] += " " + strings.TrimSpace(line)
			continue
		}
		fields = append(fields, line)
	}
	sort.SliceStable(fields, func(i, j int) bool {
		ni, _, _ := strings.Cut(fields[i], ":")
		nj, _, _ := strings.Cut(fields[j], ":")
		return strings.ToLower(ni) < strings.ToLower(nj)
	})
	for _, f := range fields {
		b.WriteString(f + "\n")
	}
}

// The placeholders of what changes from run to run. Each stands for one
// form: a value in another form (a date in another layout, an id that is
// not a number) stays in the text and shows in the diff.
var hexRun = regexp.MustCompile(`[0-9a-f]{40,}`)

var mailRules = []struct {
	re   *regexp.Regexp
	with string
}{
	// RFC 5322's Date.
	{regexp.MustCompile(`(?m)^Date: [A-Z][a-z]{2}, \d{1,2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4}$`), "Date: <date Www, D Mmm YYYY hh:mm:ss ±hhmm>"},
	{regexp.MustCompile(`boundary=("?)[0-9A-Za-z'()+_,\-./:=?]+("?)`), "boundary=$1<boundary>$2"},
	// Numeric ids in Message-IDs (<note_12@host>, <pipeline_3_failed@host>),
	// the nanoseconds of a reset request first.
	{regexp.MustCompile(`_reset_\d+@`), "_reset_<unixnano>@"},
	{regexp.MustCompile(`_\d+([_@])`), "_<id>$1"},
	// X-GitLab-*-Id headers (not the IIDs, which are the same every run).
	{regexp.MustCompile(`(?mi)^(X-GitLab-[A-Za-z-]*-Id): \d+$`), "$1: <id>"},
	{regexp.MustCompile(`#note_\d+`), "#note_<id>"},
	{regexp.MustCompile(`/pipelines/\d+`), "/pipelines/<id>"},
	{regexp.MustCompile(`Pipeline #\d+`), "Pipeline #<id>"},
	{regexp.MustCompile(`reset_password_token=[A-Za-z0-9_%-]+`), "reset_password_token=<token>"},
	{regexp.MustCompile(`\b\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\b`), "<time YYYY-MM-DD hh:mm UTC>"},
}

// normaliseMail replaces what varies per run (see mailRules) and then
// the strings in known (the server's URL with its port, short SHAs) by
// their placeholders, longest first.
func normaliseMail(t *testing.T, s string, known map[string]string) string {
	t.Helper()
	// Commit SHAs, whole (the short ones are known strings); 40 hex
	// digits and no more, wherever they stand (<commit_SHA@host>).
	s = hexRun.ReplaceAllStringFunc(s, func(h string) string {
		if len(h) == 40 {
			return "<sha>"
		}
		return h
	})
	for _, r := range mailRules {
		s = r.re.ReplaceAllString(s, r.with)
	}
	olds := make([]string, 0, len(known))
	for old := range known {
		olds = append(olds, old)
	}
	sort.Slice(olds, func(i, j int) bool { return len(olds[i]) > len(olds[j]) })
	for _, old := range olds {
		s = strings.ReplaceAll(s, old, known[old])
	}
	return s
}

// mailKnown are the strings of this run a golden mail names by
// placeholder: the server's URL (its port changes) and extra pairs
// (old, placeholder, ...).
func mailKnown(e *env, pairs ...string) map[string]string {
	m := map[string]string{e.URL: "<url>"}
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i]] = pairs[i+1]
	}
	return m
}
