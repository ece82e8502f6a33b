package project

import (
	"context"
	"net/url"
	"time"
	"unicode/utf8"
)

// HookTokenPurpose is the purpose a hook's token is sealed for
// (core/sealed): the webhooks module opens Hook tokens with it to send
// X-Gitlab-Token.
const HookTokenPurpose = "projects.hook.token"

// Hook is a project hook as the webhooks module reads it. Token is still
// sealed (open it with HookTokenPurpose): it stays out of memory until a
// delivery needs it.
type Hook struct {
	ID                    int64
	ProjectID             int64
	URL                   string
	Token                 string
	PushEvents            bool
	IssuesEvents          bool
	MergeRequestsEvents   bool
	TagPushEvents         bool
	NoteEvents            bool
	JobEvents             bool
	PipelineEvents        bool
	WikiPageEvents        bool
	EnableSSLVerification bool
	CreatedAt             time.Time
}

// Hooks lets the webhooks module read the project hooks this module
// configures. Both methods join the transaction ctx carries, if any, and
// check no permission: callers ask Access first.
type Hooks interface {
	// ProjectHooks are a project's hooks in id order (none: empty).
	ProjectHooks(ctx context.Context, projectID int64) ([]Hook, error)
	// ProjectHook is one of them; ErrHookNotFound when the project has
	// no hook of that id.
	ProjectHook(ctx context.Context, projectID, hookID int64) (Hook, error)
}

// maxHookURL bounds a hook URL, in characters.
const maxHookURL = 2048

// HookURLProblem is the shape rule of a hook URL (a project's or a system
// hook's), in GitLab's words ("is blocked: ..."): absolute http or https
// with a host, at most 2048 characters. It returns the "url" field error's
// text, or "" for a URL that passes; raw is already trimmed. Project hooks
// add the local-address check; the webhooks module applies it to system
// hooks.
func HookURLProblem(raw string) string {
	if utf8.RuneCountInString(raw) > maxHookURL {
		return "is too long (maximum is 2048 characters)"
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Opaque != "" {
		return "is blocked: URI is invalid"
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "is blocked: Only allowed schemes are http, https"
	}
	if u.Hostname() == "" {
		return "is blocked: URI is invalid"
	}
	return ""
}
