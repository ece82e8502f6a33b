package internal

import (
	"bytes"
	"context"
	"net/http"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	fdiff "github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/projects"
)

// DiffView is the spec's diff entry.
type DiffView struct {
	Diff        string  `json:"diff"`
	NewPath     string  `json:"new_path"`
	OldPath     string  `json:"old_path"`
	AMode       *string `json:"a_mode"`
	BMode       *string `json:"b_mode"`
	NewFile     bool    `json:"new_file"`
	RenamedFile bool    `json:"renamed_file"`
	DeletedFile bool    `json:"deleted_file"`
}

// singlePatch lets the unified encoder write one file's patch.
type singlePatch struct{ fp fdiff.FilePatch }

func (p singlePatch) FilePatches() []fdiff.FilePatch { return []fdiff.FilePatch{p.fp} }
func (p singlePatch) Message() string                { return "" }

// diffEntries compares two trees (from may be nil: a root commit) with
// rename detection, as GitLab's diff entries.
func diffEntries(ctx context.Context, from, to *object.Tree) ([]DiffView, error) {
	changes, err := object.DiffTreeWithOptions(ctx, from, to, object.DefaultDiffTreeOptions)
	if err != nil {
		return nil, err
	}
	patch, err := changes.PatchContext(ctx)
	if err != nil {
		return nil, err
	}
	out := []DiffView{}
	for _, fp := range patch.FilePatches() {
		a, b := fp.Files()
		v := DiffView{NewFile: a == nil, DeletedFile: b == nil}
		if a != nil {
			v.OldPath = a.Path()
			m := modeOf(filemode.FileMode(a.Mode()))
			v.AMode = &m
		}
		if b != nil {
			v.NewPath = b.Path()
			m := modeOf(filemode.FileMode(b.Mode()))
			v.BMode = &m
		}
		if a == nil {
			v.OldPath = v.NewPath
			zero := "0"
			v.AMode = &zero
		}
		if b == nil {
			v.NewPath = v.OldPath
			zero := "0"
			v.BMode = &zero
		}
		v.RenamedFile = a != nil && b != nil && a.Path() != b.Path()
		var buf bytes.Buffer
		if err := fdiff.NewUnifiedEncoder(&buf, fdiff.DefaultContextLines).Encode(singlePatch{fp}); err != nil {
			return nil, err
		}
		v.Diff = hunks(buf.String(), fp.IsBinary())
		out = append(out, v)
	}
	return out, nil
}

// hunks keeps the part of a file's unified diff from its first "@@" on (the
// headers are in the entry's fields); a binary file keeps git's one line.
func hunks(patch string, binary bool) string {
	if binary {
		if i := strings.Index(patch, "Binary files"); i >= 0 {
			return patch[i:]
		}
		return ""
	}
	if i := strings.Index(patch, "\n@@ "); i >= 0 {
		return patch[i+1:]
	}
	if strings.HasPrefix(patch, "@@ ") {
		return patch
	}
	return ""
}

type commitDiffOutput struct {
	Body []DiffView
}

func (rd *Reader) commitDiff(ctx context.Context, in *commitInput) (*commitDiffOutput, error) {
	info, repo, err := rd.open(ctx, in.ID, projects.ReadCode)
	if err != nil {
		return nil, err
	}
	c, err := resolveCommit(repo, in.SHA, info.DefaultBranch)
	if err != nil || in.SHA == "" {
		return nil, api.NotFound("Commit")
	}
	to, err := c.Tree()
	if err != nil {
		return nil, err
	}
	var from *object.Tree
	if c.NumParents() > 0 {
		p, err := c.Parent(0)
		if err != nil {
			return nil, err
		}
		if from, err = p.Tree(); err != nil {
			return nil, err
		}
	}
	entries, err := diffEntries(ctx, from, to)
	if err != nil {
		return nil, err
	}
	return &commitDiffOutput{Body: entries}, nil
}

func (rd *Reader) registerDiff(a *api.API) {
	api.Register(a, api.Op{ID: "repository-commit-diff", Method: http.MethodGet, Path: "/projects/{id}/repository/commits/{sha}/diff",
		Tags: []string{"repository"}, Summary: "The diff of a commit against its first parent", Access: api.Public}, rd.commitDiff)
}
