package internal

import (
	"bytes"
	"slices"

	"github.com/fennec-forge/fennec/sdk/executor"
)

// maskedText replaces a masked value in a trace, as GitLab Runner writes it.
const maskedText = "[MASKED]"

// masker hides secret values in a trace that arrives in chunks. The host
// masks, not the executor (the executor contract says so): an executor
// plugin is anybody's code, and a trace is read by everyone who may read
// the project's jobs, anonymous readers of a public project included.
//
// A value may be cut by a chunk boundary (a script that prints half of it,
// waits, prints the rest), so the end of a chunk that could be the start of
// a secret is held back until the next chunk says whether it is one; close
// releases what is still held. At most the longest secret's length minus
// one byte is held, and only while it could still become a secret.
type masker struct {
	// secrets, longest first: of two that match at one place the longer
	// one is hidden whole.
	secrets [][]byte
	// first marks the bytes a secret starts with, so most bytes of a trace
	// cost one lookup.
	first [256]bool
	// held is the end of the input that may still be the start of a secret.
	held []byte
}

// newMasker masks the given values; empty ones are ignored. nil when there
// is nothing to mask.
func newMasker(values []string) *masker {
	m := &masker{}
	for _, v := range values {
		if v == "" || slices.ContainsFunc(m.secrets, func(s []byte) bool { return string(s) == v }) {
			continue
		}
		m.secrets = append(m.secrets, []byte(v))
		m.first[v[0]] = true
	}
	if len(m.secrets) == 0 {
		return nil
	}
	slices.SortStableFunc(m.secrets, func(a, b []byte) int { return len(b) - len(a) })
	return m
}

// jobSecrets are the values of a job that its trace must not show: the
// variables marked Masked (the token-bearing predefined ones always, a
// user's secret from 8 characters, see handover) and the job token itself.
func jobSecrets(job executor.Job) []string {
	out := []string{job.Token}
	for _, v := range job.Variables {
		if v.Masked {
			out = append(out, v.Value)
		}
	}
	return out
}

// write masks data, which follows what earlier writes were given, and
// returns what may be stored now.
func (m *masker) write(data []byte) []byte {
	if m == nil {
		return data
	}
	buf := data
	if len(m.held) > 0 {
		buf = append(m.held, data...)
		m.held = nil
	}
	return m.scan(buf, false)
}

// close returns what is still held back: the input has ended, so it is no
// secret (a secret in it would have been complete and masked).
func (m *masker) close() []byte {
	if m == nil || len(m.held) == 0 {
		return nil
	}
	buf := m.held
	m.held = nil
	return m.scan(buf, true)
}

// scan masks buf; unless final, an end of buf that is the start of a
// secret is kept in held instead of returned.
func (m *masker) scan(buf []byte, final bool) []byte {
	var out []byte // allocated only once something is masked or held
	copied := 0    // buf[:copied] is in out already
	for i := 0; i < len(buf); {
		if !m.first[buf[i]] {
			i++
			continue
		}
		rest := buf[i:]
		matched, partial := 0, false
		for _, s := range m.secrets {
			if len(rest) >= len(s) {
				if bytes.HasPrefix(rest, s) {
					matched = len(s)
					break
				}
			} else if !final && bytes.HasPrefix(s, rest) {
				// A longer secret may still complete here: wait for it
				// rather than show its start (or mask a shorter one
				// inside it and show its end).
				partial = true
				break
			}
		}
		switch {
		case partial:
			out = append(out, buf[copied:i]...)
			m.held = append([]byte(nil), rest...)
			return out
		case matched > 0:
			out = append(out, buf[copied:i]...)
			out = append(out, maskedText...)
			i += matched
			copied = i
		default:
			i++
		}
	}
	if out == nil {
		return buf
	}
	return append(out, buf[copied:]...)
}

// maskLine masks one line of the server's own (an executor's error may
// quote what the job was given, its clone URL with the token).
func maskLine(values []string, line string) string {
	m := newMasker(values)
	if m == nil {
		return line
	}
	return string(m.write([]byte(line))) + string(m.close())
}
