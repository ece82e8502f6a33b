package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Remote is implemented by a Files that may fetch what `include: remote`
// names: an https URL. Fetch returns at most MaxConfigBytes+1 bytes (more
// is refused as too large without being read), ErrRemoteDisabled when the
// server does not allow remote includes, and a *RemoteError for a fetch
// that failed for a reason the file's author should read; any other
// error is not the configuration's fault and comes back from ParseFiles
// as it is.
type Remote interface {
	Fetch(ctx context.Context, url string) ([]byte, error)
}

// ErrRemoteDisabled: the server does not fetch remote includes.
var ErrRemoteDisabled = errors.New("pipeline: remote includes are disabled")

// RemoteError is a remote include that could not be fetched. Because is
// GitLab's reason ("a timeout error", "HTTP code `404` error"); Blocked
// says the address was refused (Because is then the guard's words).
type RemoteError struct {
	Because string
	Blocked bool
}

func (e *RemoteError) Error() string { return "pipeline: remote include: " + e.Because }

// includeRemote fetches, parses and expands one remote file.
func (in *includer) includeRemote(e includeEntry, chain []string) (*value, error) {
	if e.extra != nil {
		for _, x := range e.extra.entries {
			if x.key != "remote" {
				return nil, configError(fmt.Sprintf("include:remote %s is not supported yet (`%s`)", x.key, e.where))
			}
		}
	}
	u, err := url.Parse(e.where)
	if err != nil || u.Host == "" || u.User != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, configError(fmt.Sprintf("Remote file `%s` does not have a valid address!", e.where))
	}
	if u.Scheme != "https" {
		return nil, configError(fmt.Sprintf("Remote file `%s` could not be fetched: only https addresses are allowed", e.where))
	}
	fetcher, ok := in.root.(Remote)
	if !ok {
		return nil, configError(fmt.Sprintf("Remote file `%s` could not be fetched: remote includes are disabled on this server", e.where))
	}
	id := "remote:" + e.where
	for _, open := range chain {
		if open == id {
			return nil, configError(fmt.Sprintf("Remote file `%s` includes itself (through %s)", e.where, strings.Join(append(chain, id), " > ")))
		}
	}
	if len(chain) >= maxIncludeDepth {
		return nil, configError(fmt.Sprintf("Maximum of %d levels of nested includes are allowed!", maxIncludeDepth))
	}
	in.count++
	if in.count > maxIncludes {
		return nil, configError(fmt.Sprintf("Maximum of %d nested includes are allowed!", maxIncludes))
	}
	if err := in.ctx.Err(); err != nil {
		return nil, err
	}
	src, err := fetcher.Fetch(in.ctx, e.where)
	var re *RemoteError
	switch {
	case errors.Is(err, ErrRemoteDisabled):
		return nil, configError(fmt.Sprintf("Remote file `%s` could not be fetched: remote includes are disabled on this server", e.where))
	case errors.As(err, &re) && re.Blocked:
		return nil, configError(fmt.Sprintf("Remote file could not be fetched because %s!", re.Because))
	case errors.As(err, &re):
		return nil, configError(fmt.Sprintf("Remote file `%s` could not be fetched because of %s!", e.where, re.Because))
	case err != nil:
		return nil, err
	}
	in.size += len(src)
	if in.size > MaxIncludedBytes {
		return nil, configError(fmt.Sprintf("The CI configuration is too large: its included files hold more than %d bytes", MaxIncludedBytes))
	}
	if len(src) > MaxConfigBytes {
		return nil, configError(fmt.Sprintf("Remote file `%s` is too large: more than %d bytes", e.where, MaxConfigBytes))
	}
	if strings.TrimSpace(string(src)) == "" {
		return nil, configError(fmt.Sprintf("Remote file `%s` is empty!", e.where))
	}
	root, err := parseDocument(src, in.conv)
	if err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) && strings.Contains(ce.Error(), "too large once its aliases") {
			return nil, err
		}
		return nil, configError(fmt.Sprintf("Included file `%s` does not have valid YAML syntax!", e.where))
	}
	if root.kind != kindMap {
		return nil, configError(fmt.Sprintf("Included file `%s` does not have YAML mapping as root!", e.where))
	}
	return in.expand(root, append(chain[:len(chain):len(chain)], id))
}
