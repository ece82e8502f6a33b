package internal

import (
	"bytes"
	"context"
	"embed"
	htmltemplate "html/template"
	"net/url"
	"strconv"
	"strings"
	texttemplate "text/template"
	"time"

	"github.com/fennec-forge/fennec/core/store"

	cievent "github.com/fennec-forge/fennec/modules/ci/event"
	noteevent "github.com/fennec-forge/fennec/modules/collab/event"
	"github.com/fennec-forge/fennec/modules/collab/target"
	"github.com/fennec-forge/fennec/modules/identity"
	"github.com/fennec-forge/fennec/modules/projects"
	"github.com/fennec-forge/fennec/modules/repository"
)

//go:embed templates
var templateFiles embed.FS

// One pair of templates serves every kind: a kind fills the content, the
// templates lay it out. html/template escapes everything a user wrote.
var (
	textTemplate = texttemplate.Must(texttemplate.ParseFS(templateFiles, "templates/mail.txt.tmpl"))
	htmlTemplate = htmltemplate.Must(htmltemplate.ParseFS(templateFiles, "templates/mail.html.tmpl"))
)

// content is a mail before rendering.
type content struct {
	Subject string
	// MessageID and InReplyTo are without angle brackets; InReplyTo is
	// also the References header (the thread's first mail).
	MessageID string
	InReplyTo string
	Headers   map[string]string

	Headline  string
	Details   []string
	Body      string
	URL       string
	LinkText  string // default "View it on <site>"
	Site      string
	ManageURL string
}

func render(c *content) (text, html string, err error) {
	if c.LinkText == "" {
		c.LinkText = "View it on " + c.Site
	}
	var t, h bytes.Buffer
	if err := textTemplate.Execute(&t, c); err != nil {
		return "", "", err
	}
	if err := htmlTemplate.Execute(&h, c); err != nil {
		return "", "", err
	}
	return t.String(), h.String(), nil
}

// reference is how GitLab writes a target in a subject: #iid for an
// issue, !iid for a merge request.
func reference(t target.Noteable) string {
	if t.Type == "MergeRequest" {
		return "!" + store.IDString(t.IID)
	}
	return "#" + store.IDString(t.IID)
}

// threadID is the Message-ID of a target's first mail, which every later
// mail about it answers: <issue_12@host>, <merge_request_7@host>.
func (s *Service) threadID(t target.Noteable) string {
	kind := "issue"
	if t.Type == "MergeRequest" {
		kind = "merge_request"
	}
	return kind + "_" + store.IDString(t.ID) + "@" + s.host()
}

func (s *Service) baseHeaders(p projects.ProjectInfo) map[string]string {
	return map[string]string{"X-GitLab-Project": p.Name, "X-GitLab-Project-Id": store.IDString(p.ID),
		"X-GitLab-Project-Path": p.PathWithNamespace, "Auto-Submitted": "auto-generated"}
}

func (s *Service) targetHeaders(p projects.ProjectInfo, t target.Noteable) map[string]string {
	h := s.baseHeaders(p)
	if t.Type == "MergeRequest" {
		h["X-GitLab-MergeRequest-ID"] = store.IDString(t.ID)
		h["X-GitLab-MergeRequest-IID"] = store.IDString(t.IID)
	} else {
		h["X-GitLab-Issue-ID"] = store.IDString(t.ID)
		h["X-GitLab-Issue-IID"] = store.IDString(t.IID)
	}
	return h
}

func words(t target.Noteable) string {
	if t.Type == "MergeRequest" {
		return "merge request"
	}
	return "issue"
}

// targetContent is the mail of an issue's or a merge request's event.
func (s *Service) targetContent(ctx context.Context, p projects.ProjectInfo, t target.Noteable, event, actor, description string, previous []int64, key string) content {
	c := content{Headers: s.targetHeaders(p, t), URL: s.absolute(t.WebURL), Site: s.site(), ManageURL: s.manageURL(p)}
	subject := p.Name + " | " + t.Title + " (" + reference(t) + ")"
	what := words(t) + " " + reference(t)
	if strings.HasPrefix(event, "new_") {
		c.Subject = subject
		c.MessageID = s.threadID(t)
		c.Headline = actor + " opened " + what + ": " + t.Title
		c.Body = description
		return c
	}
	c.Subject = "Re: " + subject
	c.MessageID = strings.ReplaceAll(key, ":", "_") + "@" + s.host()
	c.InReplyTo = s.threadID(t)
	switch {
	case strings.HasPrefix(event, "close_"):
		c.Headline = capitalize(what) + " was closed by " + actor + "."
	case strings.HasPrefix(event, "reopen_"):
		c.Headline = capitalize(what) + " was reopened by " + actor + "."
	case strings.HasPrefix(event, "merge_"):
		c.Headline = capitalize(what) + " was merged by " + actor + "."
	case strings.HasPrefix(event, "mention_"):
		c.Headline = actor + " mentioned you in " + what + ": " + t.Title
		c.Body = description
	case strings.HasPrefix(event, "reassign_"):
		c.Headline = capitalize(what) + " was reassigned by " + actor + "."
		c.Details = []string{"Assignee changed from " + s.names(ctx, previous) + " to " + s.names(ctx, t.AssigneeIDs) + "."}
	}
	return c
}

// noteContent is the mail of a new comment.
func (s *Service) noteContent(p projects.ProjectInfo, t target.Noteable, ev noteevent.NoteEvent, actor string) content {
	url := s.absolute(t.WebURL) + "#note_" + store.IDString(ev.NoteID)
	h := s.targetHeaders(p, t)
	h["X-GitLab-Note-ID"] = store.IDString(ev.NoteID)
	return content{Subject: "Re: " + p.Name + " | " + t.Title + " (" + reference(t) + ")",
		MessageID: "note_" + store.IDString(ev.NoteID) + "@" + s.host(), InReplyTo: s.threadID(t), Headers: h,
		Headline: actor + " commented on " + words(t) + " " + reference(t) + ":", Body: ev.Body, URL: url,
		Site: s.site(), ManageURL: s.manageURL(p)}
}

// commitNoteContent is the mail of a comment on a commit: "Re: Project |
// title (1a2b3c4d)", in the thread of <commit_SHA@host>.
func (s *Service) commitNoteContent(p projects.ProjectInfo, t target.Noteable, ev repository.CommitCommented, actor string) content {
	short := ev.SHA
	if len(short) > 8 {
		short = short[:8]
	}
	h := s.baseHeaders(p)
	h["X-GitLab-Commit-ID"] = ev.SHA
	h["X-GitLab-Note-ID"] = store.IDString(ev.CommentID)
	c := content{Subject: "Re: " + p.Name + " | " + t.Title + " (" + short + ")",
		MessageID: "commit_note_" + store.IDString(ev.CommentID) + "@" + s.host(), InReplyTo: "commit_" + ev.SHA + "@" + s.host(), Headers: h,
		Headline: actor + " commented on commit " + short + ":", Body: ev.Note, URL: s.absolute(t.WebURL) + "#note_" + store.IDString(ev.CommentID),
		Site: s.site(), ManageURL: s.manageURL(p)}
	if ev.Path != nil && ev.Line != nil {
		c.Details = []string{"On " + *ev.Path + ", line " + strconv.Itoa(*ev.Line) + "."}
	}
	return c
}

// pipelineContent is the mail of a pipeline's result.
func (s *Service) pipelineContent(p projects.ProjectInfo, ev cievent.PipelineEvent) content {
	status := "succeeded"
	if ev.Status == "failed" {
		status = "failed"
	}
	short := ev.SHA
	if len(short) > 8 {
		short = short[:8]
	}
	h := s.baseHeaders(p)
	h["X-GitLab-Pipeline-Id"] = store.IDString(ev.PipelineID)
	h["X-GitLab-Pipeline-Status"] = ev.Status
	return content{Subject: p.Name + " | Pipeline #" + store.IDString(ev.PipelineID) + " has " + status + " for " + ev.Ref + " | " + short,
		MessageID: "pipeline_" + store.IDString(ev.PipelineID) + "_" + ev.Status + "@" + s.host(),
		InReplyTo: "pipeline_" + store.IDString(ev.PipelineID) + "@" + s.host(), Headers: h,
		Headline: "Pipeline #" + store.IDString(ev.PipelineID) + " has " + status + " for " + ev.Ref + " (" + short + ").",
		URL:      s.absolute(p.WebURL) + "/pipelines/" + store.IDString(ev.PipelineID), Site: s.site(), ManageURL: s.manageURL(p)}
}

// absolute makes a link outside a request (where the external URL is not
// in the context) absolute.
func (s *Service) absolute(link string) string {
	if strings.HasPrefix(link, "/") {
		return s.externalURL() + link
	}
	return link
}

// accountContent is the mail to a user an administrator created with
// reset_password: a link to choose a password, with the reset token.
func (s *Service) accountContent(ev identity.UserCreated, token string, expires time.Time) content {
	link := s.externalURL() + "/users/password/edit?reset_password_token=" + url.QueryEscape(token)
	return content{Subject: "Account was created for you", MessageID: "user_" + store.IDString(ev.UserID) + "_created@" + s.host(),
		Headers:  map[string]string{"Auto-Submitted": "auto-generated"},
		Headline: "Hi " + ev.Name + "! An administrator created an account for you on " + s.site() + ".",
		Details: []string{"Your username is " + ev.Username + ".",
			"Choose your password with the link below; it is valid until " + expires.Format("2006-01-02 15:04 MST") + "."},
		URL: link, LinkText: "Set your password", Site: s.site()}
}

// resetContent is the mail of the "forgot your password" page: a link to
// choose a new password.
func (s *Service) resetContent(ev identity.PasswordResetRequested, token string, expires time.Time) content {
	link := s.externalURL() + "/users/password/edit?reset_password_token=" + url.QueryEscape(token)
	return content{Subject: "Reset password instructions",
		MessageID: "user_" + store.IDString(ev.UserID) + "_reset_" + store.IDString(ev.RequestedAt.UnixNano()) + "@" + s.host(),
		Headers:   map[string]string{"Auto-Submitted": "auto-generated"},
		Headline:  "Hi " + ev.Name + "! Someone asked for a link to change the password of your account " + ev.Username + " on " + s.site() + ".",
		Details: []string{"Choose a new password with the link below; it is valid until " + expires.Format("2006-01-02 15:04 MST") + ".",
			"If you did not ask for it, ignore this mail: your password stays as it is."},
		URL: link, LinkText: "Change your password", Site: s.site()}
}

func (s *Service) site() string { return s.host() }

// manageURL is where a user changes their notification level (GitLab's
// profile page; Fennec serves the API for it).
func (s *Service) manageURL(projects.ProjectInfo) string {
	return s.externalURL() + "/profile/notifications"
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// names writes users as @username, "Unassigned" for none.
func (s *Service) names(ctx context.Context, ids []int64) string {
	if len(ids) == 0 {
		return "Unassigned"
	}
	var out []string
	for _, id := range ids {
		if u, err := s.users.UserByID(ctx, id); err == nil {
			out = append(out, "@"+u.Username)
		}
	}
	if len(out) == 0 {
		return "Unassigned"
	}
	return strings.Join(out, ", ")
}
