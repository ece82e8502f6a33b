package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
)

// Projects is implemented by a Files that can read the files of other
// projects of the server, as the pipeline's user may: what `include:
// project` names. Project returns the files of project (its full path) at
// ref ("" is its default branch). An error matching ErrProjectNotFound
// means the project does not exist or the user may not read its code, and
// ErrRefNotFound that ref names no commit of it; any other error is not
// the configuration's fault and comes back from ParseFiles as it is.
type Projects interface {
	Project(ctx context.Context, project, ref string) (Files, error)
}

// The answers of Projects.Project that are the configuration's fault.
var (
	ErrProjectNotFound = errors.New("pipeline: project not found or access denied")
	ErrRefNotFound     = errors.New("pipeline: reference not found")
)

// includeProject includes `{project, ref, file}`: one file or a list of
// them, read from the project at ref. Their own `include: local` entries
// name files of that project at that ref, as in GitLab.
func (in *includer) includeProject(e includeEntry, chain []string) (*value, error) {
	var files []string
	var ref string
	if e.extra != nil {
		for _, x := range e.extra.entries {
			switch x.key {
			case "project":
			case "file":
				switch {
				case x.val.isString():
					files = []string{x.val.text}
				default:
					list, ok := stringItems(x.val)
					if !ok {
						return nil, configError(fmt.Sprintf("Include `%s` needs to match exactly one accessor!", describeInclude(e.extra)))
					}
					files = list
				}
			case "ref":
				if !x.val.isString() && x.val.kind != kindScalar {
					return nil, configError(fmt.Sprintf("Include `%s` needs to match exactly one accessor!", describeInclude(e.extra)))
				}
				ref = x.val.text
			default:
				return nil, configError(fmt.Sprintf("include:project %s is not supported yet (`%s`)", x.key, e.where))
			}
		}
	}
	if len(files) == 0 || strings.TrimSpace(e.where) == "" {
		return nil, configError(fmt.Sprintf("Include `%s` needs to match exactly one accessor!", describeInclude(e.extra)))
	}
	project := strings.ToLower(strings.Trim(e.where, "/"))
	reader, ok := in.root.(Projects)
	if !ok {
		return nil, configError(fmt.Sprintf("Project `%s` cannot be included: this configuration is not read from a repository", project))
	}
	if err := in.ctx.Err(); err != nil {
		return nil, err
	}
	shown := ref
	if shown == "" {
		shown = "HEAD"
	}
	pf, err := reader.Project(in.ctx, project, ref)
	switch {
	case errors.Is(err, ErrProjectNotFound):
		return nil, configError(fmt.Sprintf("Project `%s` not found or access denied! Make sure any includes in the pipeline configuration are correctly defined.", project))
	case errors.Is(err, ErrRefNotFound):
		return nil, configError(fmt.Sprintf("Project `%s` reference `%s` does not exist!", project, shown))
	case err != nil:
		return nil, err
	}
	savedFiles, savedProject, savedRef := in.files, in.project, in.ref
	in.files, in.project, in.ref = pf, project, shown
	defer func() { in.files, in.project, in.ref = savedFiles, savedProject, savedRef }()
	var merged *value
	r := &resolver{}
	for _, f := range files {
		f = strings.TrimPrefix(path.Clean("/"+f), "/")
		included, err := in.includeFile(f, chain)
		if err != nil {
			return nil, err
		}
		merged = r.deepMerge(merged, included)
	}
	in.work += r.work
	return merged, r.err
}
