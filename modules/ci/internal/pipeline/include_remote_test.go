package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// webFiles is a repository whose server fetches remote includes from a
// map of URLs; an error stands for the fetch's failure.
type webFiles struct {
	mapFiles
	urls    map[string]string
	failure error
	fetched []string
}

func (w *webFiles) Fetch(_ context.Context, url string) ([]byte, error) {
	w.fetched = append(w.fetched, url)
	if w.failure != nil {
		return nil, w.failure
	}
	src, ok := w.urls[url]
	if !ok {
		return nil, &RemoteError{Because: "HTTP code `404` error"}
	}
	return []byte(src), nil
}

func TestIncludeRemote(t *testing.T) {
	t.Parallel()
	files := &webFiles{
		mapFiles: mapFiles{files: map[string]string{"local.yml": ".l: {tags: [local]}\n"}},
		urls: map[string]string{
			"https://example.com/ci.yml":   "include: [local.yml, 'https://example.com/more.yml']\n.r: {extends: .l, variables: {FROM: remote}}\n",
			"https://example.com/more.yml": "more: {script: more}\n",
		},
	}
	cfg, err := ParseFiles(context.Background(), []byte("include: https://example.com/ci.yml\nj: {extends: .r, script: x}\n"), files)
	if err != nil {
		t.Fatal(err)
	}
	if names := jobNames(cfg); names != "more j" {
		t.Errorf("jobs = %s", names)
	}
	j := jobNamed(t, cfg, "j")
	if len(j.Tags) != 1 || j.Tags[0] != "local" || len(j.Variables) != 1 || j.Variables[0].Value != "remote" {
		t.Errorf("j = %+v", j)
	}
	if len(files.fetched) != 2 {
		t.Errorf("fetched %q", files.fetched)
	}
}

func TestIncludeRemoteErrors(t *testing.T) {
	t.Parallel()
	urls := map[string]string{
		"https://x.example/self.yml":  "include: {remote: 'https://x.example/self.yml'}\n",
		"https://x.example/empty.yml": " \n",
		"https://x.example/list.yml":  "- a\n",
		"https://x.example/bad.yml":   "a: [\n",
		"https://x.example/big.yml":   "a: b\n#" + strings.Repeat("x", MaxConfigBytes),
	}
	tests := []struct {
		name, include string
		failure       error
		want          string
	}{
		{"not an address", "{remote: 'https://'}", nil, "Remote file `https://` does not have a valid address!"},
		{"credentials", "{remote: 'https://u:p@x.example/a.yml'}", nil, "Remote file `https://u:p@x.example/a.yml` does not have a valid address!"},
		{"ftp", "{remote: 'ftp://x.example/a.yml'}", nil, "Remote file `ftp://x.example/a.yml` does not have a valid address!"},
		{"plain http", "{remote: 'http://x.example/a.yml'}", nil, "Remote file `http://x.example/a.yml` could not be fetched: only https addresses are allowed"},
		{"unknown key", "{remote: 'https://x.example/a.yml', integrity: 'sha256-x'}", nil, "include:remote integrity is not supported yet (`https://x.example/a.yml`)"},
		{"404", "'https://x.example/nope.yml'", nil, "Remote file `https://x.example/nope.yml` could not be fetched because of HTTP code `404` error!"},
		{"timeout", "'https://x.example/a.yml'", &RemoteError{Because: "a timeout error"}, "Remote file `https://x.example/a.yml` could not be fetched because of a timeout error!"},
		{"blocked", "'https://x.example/a.yml'", &RemoteError{Because: "Requests to the local network are not allowed", Blocked: true}, "Remote file could not be fetched because Requests to the local network are not allowed!"},
		{"disabled", "'https://x.example/a.yml'", fmt.Errorf("off: %w", ErrRemoteDisabled), "Remote file `https://x.example/a.yml` could not be fetched: remote includes are disabled on this server"},
		{"itself", "'https://x.example/self.yml'", nil, "Remote file `https://x.example/self.yml` includes itself (through remote:https://x.example/self.yml > remote:https://x.example/self.yml)"},
		{"empty", "'https://x.example/empty.yml'", nil, "Remote file `https://x.example/empty.yml` is empty!"},
		{"not a mapping", "'https://x.example/list.yml'", nil, "Included file `https://x.example/list.yml` does not have YAML mapping as root!"},
		{"bad YAML", "'https://x.example/bad.yml'", nil, "Included file `https://x.example/bad.yml` does not have valid YAML syntax!"},
		{"too large", "'https://x.example/big.yml'", nil, "Remote file `https://x.example/big.yml` is too large: more than 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := &webFiles{urls: urls, failure: tt.failure}
			_, err := ParseFiles(context.Background(), []byte("include: "+tt.include+"\nj: {script: x}\n"), files)
			if err == nil || err.Error() != tt.want || !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("err = %v\nwant %q", err, tt.want)
			}
		})
	}
}

// A failure that is not the file's comes back as it is.
func TestIncludeRemoteFailure(t *testing.T) {
	t.Parallel()
	boom := errors.New("resolver on fire")
	_, err := ParseFiles(context.Background(), []byte("include: 'https://x.example/a.yml'\nj: {script: x}\n"), &webFiles{failure: boom})
	if !errors.Is(err, boom) || errors.Is(err, ErrInvalidConfig) {
		t.Errorf("err = %v", err)
	}
}
