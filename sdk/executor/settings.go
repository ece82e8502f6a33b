package executor

import (
	"fmt"
	"runtime"
	"strings"
)

// CommonSettings are the settings keys every executor reads alike; an
// executor embeds the struct in its own settings (`json:",inline"` is not
// needed: embedding a struct flattens its fields in encoding/json).
//
// The administrator sets tags, run_untagged and concurrency in the plugin's
// entry of the configuration; the host adds data_dir and server_data_dir.
type CommonSettings struct {
	// Tags the executor serves (Capabilities.Tags).
	Tags []string `json:"tags,omitempty"`
	// RunUntagged: also take untagged jobs; default true when Tags is
	// empty, false otherwise (an executor with tags is usually for those).
	RunUntagged *bool `json:"run_untagged,omitempty"`
	// Concurrency: jobs at once; default the number of CPUs, at least 2.
	Concurrency int `json:"concurrency,omitempty"`
	// DataDir is a directory of the executor's own, set by the host
	// (<data>/executors/<name>) unless the configuration sets it.
	DataDir string `json:"data_dir,omitempty"`
	// ServerDataDir is Fennec's data directory, set by the host, so that
	// an isolating executor can hide it from jobs.
	ServerDataDir string `json:"server_data_dir,omitempty"`
}

// Capabilities are the capabilities these settings give, after checking
// them.
func (s CommonSettings) Capabilities() (Capabilities, error) {
	c := Capabilities{Concurrency: s.Concurrency, Tags: []string{}}
	for _, t := range s.Tags {
		t = strings.TrimSpace(t)
		if t == "" {
			return Capabilities{}, fmt.Errorf("tags: a tag is empty")
		}
		c.Tags = append(c.Tags, t)
	}
	if s.RunUntagged != nil {
		c.RunUntagged = *s.RunUntagged
	} else {
		c.RunUntagged = len(c.Tags) == 0
	}
	if c.Concurrency < 0 {
		return Capabilities{}, fmt.Errorf("concurrency must be positive")
	}
	if c.Concurrency == 0 {
		c.Concurrency = max(2, runtime.NumCPU())
	}
	return c, nil
}
