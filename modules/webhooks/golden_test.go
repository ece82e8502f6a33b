package webhooks_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/fennec-forge/fennec/core/fennectest"
)

// update rewrites the golden files under testdata/ from what the tests
// receive, instead of comparing with them:
//
//	go test ./modules/webhooks/ -run 'Payload|SystemHooks' -update
//
// Review the diff of testdata/ before committing it.
var update = flag.Bool("update", false, "rewrite the golden payload files in testdata/")

// goldenHeaders are the request headers a golden file keeps: the ones a
// receiver reads to know what it got.
var goldenHeaders = []string{"Authorization", "Content-Type", "X-Gitlab-Event", "X-Gitlab-Token"}

// golden compares one delivery (the headers above and the whole body)
// with testdata/<name>.json, after normalise. The exact assertions of the
// tests say which values matter; the golden file pins the complete shape:
// every field, its type, and every value that is the same on every run.
// known maps literal strings of this run (the server's and the
// receiver's URL, tokens) to their placeholders.
func golden(t *testing.T, name string, d delivery, known map[string]string) {
	t.Helper()
	writeGolden(t, name, goldenDoc(t, d, known))
}

// goldenSeq is golden for a sequence of deliveries, in the order they
// came: one file, a list.
func goldenSeq(t *testing.T, name string, ds []delivery, known map[string]string) {
	t.Helper()
	docs := make([]any, len(ds))
	for i, d := range ds {
		docs[i] = goldenDoc(t, d, known)
	}
	writeGolden(t, name, docs)
}

func goldenDoc(t *testing.T, d delivery, known map[string]string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(d.Raw))
	dec.UseNumber() // keep 5 and 5.0 apart, and big ids exact
	var body any
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("golden: the body is not JSON: %v\n%s", err, d.Raw)
	}
	headers := map[string]any{}
	for _, h := range goldenHeaders {
		if v, ok := d.Header[h]; ok {
			headers[h] = strings.Join(v, ", ")
		}
	}
	return map[string]any{"headers": normalise(headers, "", known), "body": normalise(body, "", known)}
}

func writeGolden(t *testing.T, name string, doc any) {
	t.Helper()
	var got bytes.Buffer
	enc := json.NewEncoder(&got)
	enc.SetEscapeHTML(false) // the file is read by people, not browsers
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	compareGolden(t, filepath.Join("testdata", name+".json"), got.Bytes())
}

// compareGolden compares got with the file, or writes it under -update.
func compareGolden(t *testing.T, file string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (- golden, + got; go test -update rewrites it):\n%s", file, fennectest.LineDiff(string(want), string(got)))
	}
}

// The placeholders of values that change from run to run. Each replaces
// only a value of the expected JSON type and form, so a field that goes
// missing, turns null, changes type (an id sent as a string) or format
// (a timestamp in another layout) still shows in the diff.
var (
	// Ruby's Time#to_s, xmlschema and RFC 3339 with an offset.
	timestamp = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}([ T])\d{2}:\d{2}:\d{2}(\.\d+)?( UTC|Z|[+-]\d{2}:\d{2})$`)
	// 40 hex digits and no more, wherever they stand.
	hexRun  = regexp.MustCompile(`[0-9a-f]{40,}`)
	integer = regexp.MustCompile(`^-?\d+$`)
	decimal = regexp.MustCompile(`^-?\d+(\.\d+)?([eE][+-]?\d+)?$`)
	// A note's id in its URL's fragment.
	noteAnchor = regexp.MustCompile(`#note_\d+$`)
)

// normalise returns v (decoded with UseNumber) with the values that vary
// per run replaced: integer ids ("id", "*_id", and the elements of
// "*_ids") by "<id>", durations by "<duration>", timestamps by "<time
// LAYOUT>", 40-hex SHAs by "<sha>" (the zero SHA stays: it means "no
// commit"), note anchors by "#note_<id>", and the strings in known by
// their placeholders. key is the field v is the value of.
func normalise(v any, key string, known map[string]string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalise(e, k, known)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			k := key
			if strings.HasSuffix(key, "_ids") {
				k = "id"
			}
			out[i] = normalise(e, k, known)
		}
		return out
	case json.Number:
		switch {
		case (key == "id" || strings.HasSuffix(key, "_id")) && integer.MatchString(string(x)):
			return "<id>"
		case (key == "duration" || strings.HasSuffix(key, "_duration")) && decimal.MatchString(string(x)):
			return "<duration>"
		}
		return x
	case string:
		return normaliseString(x, known)
	}
	return v
}

func normaliseString(s string, known map[string]string) string {
	if m := timestamp.FindStringSubmatch(s); m != nil {
		layout := "YYYY-MM-DD" + m[1] + "hh:mm:ss"
		if m[2] != "" {
			layout += ".fff"
		}
		switch m[3] {
		case " UTC", "Z":
			layout += m[3]
		default:
			layout += "±hh:mm"
		}
		return "<time " + layout + ">"
	}
	// Longest first: a URL that contains another known one.
	olds := make([]string, 0, len(known))
	for old := range known {
		olds = append(olds, old)
	}
	sort.Slice(olds, func(i, j int) bool { return len(olds[i]) > len(olds[j]) })
	for _, old := range olds {
		s = strings.ReplaceAll(s, old, known[old])
	}
	s = hexRun.ReplaceAllStringFunc(s, func(h string) string {
		if len(h) != 40 || h == strings.Repeat("0", 40) {
			return h
		}
		return "<sha>"
	})
	return noteAnchor.ReplaceAllString(s, "#note_<id>")
}

// known are the strings of this run a golden file names by placeholder:
// the server's URL and the receiver's (both carry a random port).
func known(e *env, rcv *receiver) map[string]string {
	m := map[string]string{e.URL: "<url>"}
	if rcv != nil {
		m[rcv.URL] = "<receiver>"
	}
	return m
}

// The normaliser hides only what varies: a field's presence, its JSON type
// and a value in another form stay visible in a golden diff.
func TestNormaliseKeepsTheShape(t *testing.T) {
	t.Parallel()
	var in any
	dec := json.NewDecoder(strings.NewReader(`{"id": 7, "project_id": "7", "user_id": null, "iid": 3, "x_ids": [1, 2],
		"build_duration": 0.5, "created_at": "2026-01-02 03:04:05 UTC", "updated_at": "2026-01-02 03:04:05",
		"timestamp": "2026-01-02T03:04:05+01:00", "before": "0000000000000000000000000000000000000000",
		"after": "0123456789abcdef0123456789abcdef01234567", "short": "0123456", "ratio": 1.5,
		"url": "http://127.0.0.1:4242/a/b/commit/0123456789abcdef0123456789abcdef01234567#note_12"}`))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(normalise(in, "", map[string]string{"http://127.0.0.1:4242": "<url>"})); err != nil {
		t.Fatal(err)
	}
	got := bytes.TrimSpace(buf.Bytes())
	want := `{"after":"<sha>","before":"0000000000000000000000000000000000000000","build_duration":"<duration>",` +
		`"created_at":"<time YYYY-MM-DD hh:mm:ss UTC>","id":"<id>","iid":3,"project_id":"7","ratio":1.5,"short":"0123456",` +
		`"timestamp":"<time YYYY-MM-DDThh:mm:ss±hh:mm>","updated_at":"2026-01-02 03:04:05",` +
		`"url":"<url>/a/b/commit/<sha>#note_<id>","user_id":null,"x_ids":["<id>","<id>"]}`
	if string(got) != want {
		t.Errorf("normalised\n%s\nwant\n%s", got, want)
	}
}
