package internal

// Samples for POST /projects/:id/hooks/:hook_id/test/:trigger: the
// payload the trigger would send, built from the project's latest object
// of its kind, as later GitLab versions do.

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/repository"
	repoevent "github.com/fennec-forge/fennec/modules/repository/event"
	"github.com/fennec-forge/fennec/modules/repository/gitread"
	"github.com/fennec-forge/fennec/modules/webhooks/webhook"
)

// pushSample is a push of the default branch's last three commits.
func (s *Service) pushSample(ctx context.Context, projectID, userID int64) (any, error) {
	const none = webhook.NoSampleError("Ensure the project has at least one commit.")
	p, err := s.projectData(ctx, projectID)
	if err != nil {
		return nil, err
	}
	if p.info.DefaultBranch == "" {
		return nil, none
	}
	sys := auth.WithPrincipal(ctx, auth.System())
	head, err := s.repos.Resolve(sys, projectID, "refs/heads/"+p.info.DefaultBranch)
	if err != nil {
		return nil, none
	}
	var cs []gitread.Commit
	err = s.repos.Log(sys, projectID, gitread.LogQuery{From: []string{head}, Limit: 3}, func(c gitread.Commit) bool {
		cs = append(cs, c)
		return true
	})
	if err != nil || len(cs) == 0 {
		return nil, none
	}
	ev := repository.PushEvent{ObjectKind: repository.BranchPush, ProjectID: projectID, UserID: userID,
		Ref: "refs/heads/" + p.info.DefaultBranch, Before: repoevent.ZeroSHA, After: cs[0].ID, TotalCommitsCount: len(cs)}
	if last := cs[len(cs)-1]; len(last.ParentIDs) > 0 {
		ev.Before = last.ParentIDs[0]
	}
	for i := len(cs) - 1; i >= 0; i-- {
		c := cs[i]
		pc := repository.PushCommit{ID: c.ID, Message: c.Message, Timestamp: c.Author.When.Format("2006-01-02T15:04:05-07:00"),
			URL: p.web + "/commit/" + c.ID, Added: []string{}, Modified: []string{}, Removed: []string{}}
		pc.Author.Name, pc.Author.Email = c.Author.Name, c.Author.Email
		ev.Commits = append(ev.Commits, pc)
	}
	return s.pushBody(ctx, ev)
}

// tagPushSample is the creation of the project's last tag (by name).
func (s *Service) tagPushSample(ctx context.Context, projectID, userID int64) (any, error) {
	const none = webhook.NoSampleError("Ensure the project has tags.")
	refs, err := s.repos.Tags(auth.WithPrincipal(ctx, auth.System()), projectID)
	if err != nil || len(refs) == 0 {
		return nil, none
	}
	r := refs[len(refs)-1]
	ev := repository.PushEvent{ObjectKind: repository.TagPush, ProjectID: projectID, UserID: userID,
		Ref: r.FullName, Before: repoevent.ZeroSHA, After: r.Target, Commits: []repository.PushCommit{}}
	return s.pushBody(ctx, ev)
}

// latestFact decodes the project's newest fact of kind into v.
func (s *Service) latestFact(ctx context.Context, projectID int64, kind string, v any) (bool, error) {
	found := false
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := facts.IDsBy(tx, "project", strconv.FormatInt(projectID, 10))
		if err != nil {
			return err
		}
		var best *Fact
		for _, id := range ids {
			f, err := facts.Get(tx, id)
			if err != nil {
				return err
			}
			if !strings.HasPrefix(f.Ref, kind+":") {
				continue
			}
			// The newest object has the highest id of its kind.
			if best == nil || refID(f.Ref) > refID(best.Ref) {
				best = f
			}
		}
		if best == nil {
			return nil
		}
		found = true
		return json.Unmarshal(best.Data, v)
	})
	return found, err
}

func refID(ref string) int64 {
	n, _ := strconv.ParseInt(ref[strings.IndexByte(ref, ':')+1:], 10, 64)
	return n
}

func (s *Service) issueSample(ctx context.Context, projectID, userID int64) (any, error) {
	var is issueFact
	if ok, err := s.latestFact(ctx, projectID, "issue", &is); err != nil || !ok {
		return nil, orNone(err, "Ensure the project has issues.")
	}
	return s.issueBody(ctx, userID, "open", is)
}

func (s *Service) noteSample(ctx context.Context, projectID, _ int64) (any, error) {
	var n noteFact
	if ok, err := s.latestFactByID(ctx, "note", projectID, &n); err != nil || !ok {
		return nil, orNone(err, "Ensure the project has notes.")
	}
	return s.noteBodyFor(ctx, n)
}

func (s *Service) mergeRequestSample(ctx context.Context, projectID, userID int64) (any, error) {
	var mr mergeRequestFact
	if ok, err := s.latestFact(ctx, projectID, "merge_request", &mr); err != nil || !ok {
		return nil, orNone(err, "Ensure the project has merge requests.")
	}
	return s.mergeRequestBody(ctx, userID, "open", mr)
}

func (s *Service) jobSample(ctx context.Context, projectID, _ int64) (any, error) {
	var j jobFact
	if ok, err := s.latestFact(ctx, projectID, "job", &j); err != nil || !ok {
		return nil, orNone(err, "Ensure the project has CI jobs.")
	}
	var pl pipelineFact
	ok, err := s.latestFactByID(ctx, "pipeline", j.PipelineID, &pl)
	if err != nil {
		return nil, err
	}
	if !ok {
		return s.jobBody(ctx, j, nil)
	}
	return s.jobBody(ctx, j, &pl)
}

func (s *Service) pipelineSample(ctx context.Context, projectID, _ int64) (any, error) {
	var pl pipelineFact
	if ok, err := s.latestFact(ctx, projectID, "pipeline", &pl); err != nil || !ok {
		return nil, orNone(err, "Ensure the project has CI pipelines.")
	}
	var jobs []jobFact
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := facts.IDsBy(tx, "pipeline", strconv.FormatInt(pl.PipelineID, 10))
		if err != nil {
			return err
		}
		for _, id := range ids {
			f, err := facts.Get(tx, id)
			if err != nil {
				return err
			}
			var j jobFact
			if err := json.Unmarshal(f.Data, &j); err != nil {
				return err
			}
			jobs = append(jobs, j)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].JobID < jobs[b].JobID })
	return s.pipelineBody(ctx, pl, jobs)
}

func (s *Service) latestFactByID(ctx context.Context, kind string, id int64, v any) (bool, error) {
	var ok bool
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		ok, err = getFact(tx, kind, id, v)
		return err
	})
	return ok, err
}

func orNone(err error, msg string) error {
	if err != nil {
		return err
	}
	return webhook.NoSampleError(msg)
}
