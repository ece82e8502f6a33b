package internal

// The HTTP adapter of blame.go: routes, request inputs, GitLab views and
// status codes; the service side stays in blame.go.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fennec-forge/fennec/core/api"
)

// BlameCommit is the commit of a blame range, as GitLab renders it.
type BlameCommit struct {
	ID             string      `json:"id"`
	ParentIDs      []string    `json:"parent_ids"`
	Message        string      `json:"message"`
	AuthoredDate   api.GitTime `json:"authored_date"`
	AuthorName     string      `json:"author_name"`
	AuthorEmail    string      `json:"author_email"`
	CommittedDate  api.GitTime `json:"committed_date"`
	CommitterName  string      `json:"committer_name"`
	CommitterEmail string      `json:"committer_email"`
}

func (rd *Reader) blame(ctx context.Context, in *blameInput) (*struct{ Body []BlameRange }, error) {
	f, err := rd.findFile(ctx, &fileInput{ProjectPath: in.ProjectPath, FilePath: in.FilePath, Ref: in.Ref})
	if err != nil {
		return nil, err
	}
	out, err := rd.blameAt(ctx, f)
	switch {
	case errors.Is(err, errBlameTooLarge):
		return nil, api.BadRequest(fmt.Sprintf("400 Bad request - the file is too large to blame (at most %d bytes)", maxBlameBlob))
	case errors.Is(err, errBlameTooLong):
		return nil, api.BadRequest(fmt.Sprintf("400 Bad request - the file's history is too long to blame (more than %d commits or %d lines to compare)",
			maxBlameCommits, maxBlameDiffLines))
	case isMissing(err):
		return nil, api.NotFound("File")
	case err != nil:
		return nil, err
	}
	return &struct{ Body []BlameRange }{Body: out}, nil
}

// blameAt blames a file found at a ref, in ranges of lines; the errors
// are blameFile's (errBlameTooLarge, errBlameTooLong, a missing object).
// The API's blame and the blame page share it.
func (rd *Reader) blameAt(ctx context.Context, f *fileAt) ([]BlameRange, error) {
	objs, err := rd.store.Objects(f.projectID)
	if err != nil {
		return nil, err
	}
	owners, lines, err := blameFile(ctx, objs, f.commit.Hash, f.path, f.blob)
	if err != nil {
		return nil, err
	}
	return blameRanges(f.repo, owners, lines)
}

// blameRanges groups consecutive lines of the same commit.
func blameRanges(repo *git.Repository, owners []plumbing.Hash, lines [][]byte) ([]BlameRange, error) {
	out := []BlameRange{}
	views := map[plumbing.Hash]BlameCommit{}
	for i, h := range owners {
		text := strings.TrimSuffix(string(lines[i]), "\n")
		if i > 0 && owners[i-1] == h {
			last := &out[len(out)-1]
			last.Lines = append(last.Lines, text)
			continue
		}
		v, ok := views[h]
		if !ok {
			c, err := repo.CommitObject(h)
			if err != nil {
				return nil, fmt.Errorf("repository: blame: read commit %s: %w", h, err)
			}
			v = BlameCommit{ID: c.Hash.String(), ParentIDs: []string{}, Message: c.Message,
				AuthoredDate: api.GitTime(c.Author.When), AuthorName: c.Author.Name, AuthorEmail: c.Author.Email,
				CommittedDate: api.GitTime(c.Committer.When), CommitterName: c.Committer.Name, CommitterEmail: c.Committer.Email}
			for _, p := range c.ParentHashes {
				v.ParentIDs = append(v.ParentIDs, p.String())
			}
			views[h] = v
		}
		out = append(out, BlameRange{Commit: v, Lines: []string{text}})
	}
	return out, nil
}

func (rd *Reader) registerBlame(a *api.API) {
	api.Register(a, api.Op{ID: "repository-file-blame", Method: http.MethodGet, Path: "/projects/{id}/repository/files/{file_path}/blame",
		Tags: []string{"repository"}, Summary: "Which commit last changed each line of a file",
		Description: fmt.Sprintf("Ranges of consecutive lines with their commit, as git blame finds them (renames are not followed). "+
			"Refused (400) for a file over %d bytes or a history that needs more than %d commits to walk.", maxBlameBlob, maxBlameCommits),
		Access: api.Public}, rd.blame)
}

type blameInput struct {
	ProjectPath
	FilePath string `path:"file_path" doc:"URL-encoded path of the file"`
	Ref      string `query:"ref" required:"true" doc:"Branch, tag or commit"`
}

// BlameRange is a run of consecutive lines last changed by one commit;
// the lines are given without their line ends.
type BlameRange struct {
	Commit BlameCommit `json:"commit"`
	Lines  []string    `json:"lines"`
}
