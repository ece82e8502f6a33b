package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Files reads files of the repository a configuration comes from, at the
// commit of its pipeline: what `include: local` names. Read returns an
// error matching fs.ErrNotExist for a path that is not a file there; any
// other error is not the configuration's fault and comes back from
// ParseFiles as it is.
type Files interface {
	Read(ctx context.Context, path string) ([]byte, error)
}

// Lister is implemented by a Files that can list a directory: then
// `include: local` takes glob patterns (`ci/*.yml`, `ci/**/*.yml`). List
// returns the names of the files and of the directories (those with a
// trailing '/') directly in dir ("" is the root), and an error matching
// fs.ErrNotExist for a dir that is not one.
type Lister interface {
	List(ctx context.Context, dir string) ([]string, error)
}

// MaxGlobVisits bounds the directory entries one wildcard include may
// look at.
const MaxGlobVisits = 10_000

// The bounds of include. GitLab counts every included file, nested ones
// too, against 150 and allows 100 levels of nesting; the total size is
// Fennec's own bound on what one pipeline may make it read.
const (
	maxIncludes      = 150
	maxIncludeDepth  = 100
	MaxIncludedBytes = 4 * MaxConfigBytes
)

// includer expands `include` entries, depth first, each included file's
// own includes before it is merged.
type includer struct {
	ctx   context.Context
	files Files // the files of the file being expanded: the pipeline's repository's, or an included project's
	root  Files // the pipeline's repository's, which may read other projects (Projects)
	// project and ref name the project whose files are being expanded
	// (include: project), empty for the pipeline's own repository.
	project, ref string
	conv         *converter
	count        int
	size         int // bytes read so far, the main file's included
	work         int
}

// includeEntry is one entry of `include`, of one of the kinds GitLab knows.
type includeEntry struct {
	kind  string // local, project, remote, template, component
	where string // the path, project, URL, template or component named
	extra *value // the entry as a mapping, for its other keys
}

func (in *includer) expand(root *value, chain []string) (*value, error) {
	inc := root.get("include")
	if inc == nil {
		return root, nil
	}
	entries, err := includeEntries(inc)
	if err != nil {
		return nil, err
	}
	var merged *value
	r := &resolver{}
	for _, e := range entries {
		included, err := in.include(e, chain)
		if err != nil {
			return nil, err
		}
		merged = r.deepMerge(merged, included)
	}
	// The including file's own keys win over what it includes.
	own := &value{kind: kindMap, tag: root.tag, line: root.line, column: root.column, size: 1}
	for _, e := range root.entries {
		if e.key != "include" {
			own.entries = append(own.entries, e)
			own.size += 1 + e.val.size
		}
	}
	out := r.deepMerge(merged, own)
	in.work += r.work
	if r.err != nil {
		return nil, r.err
	}
	return out, nil
}

// includeEntries reads `include`: a string, a mapping, or a list of both.
func includeEntries(v *value) ([]includeEntry, error) {
	items := []*value{v}
	if v.kind == kindSeq {
		items = v.items
	}
	out := make([]includeEntry, 0, len(items))
	for _, item := range items {
		switch {
		case item.isString():
			kind := "local"
			if strings.HasPrefix(item.text, "https://") || strings.HasPrefix(item.text, "http://") {
				kind = "remote"
			}
			out = append(out, includeEntry{kind: kind, where: item.text})
		case item.kind == kindMap:
			var e includeEntry
			for _, kind := range []string{"local", "project", "remote", "template", "component"} {
				if w := item.get(kind); w != nil {
					if e.kind != "" || !w.isString() {
						return nil, configError(fmt.Sprintf("Include `%s` needs to match exactly one accessor!", describeInclude(item)))
					}
					e = includeEntry{kind: kind, where: w.text, extra: item}
				}
			}
			if e.kind == "" {
				return nil, configError(fmt.Sprintf("Include `%s` needs to match exactly one accessor!", describeInclude(item)))
			}
			out = append(out, e)
		default:
			return nil, configError("include config should be a hash, a string or an array containing strings and hashes")
		}
	}
	return out, nil
}

// describeInclude shows an include mapping's keys for error messages.
func describeInclude(v *value) string {
	keys := make([]string, 0, len(v.entries))
	for _, e := range v.entries {
		keys = append(keys, e.key)
	}
	return "{" + strings.Join(keys, ", ") + "}"
}

func (in *includer) include(e includeEntry, chain []string) (*value, error) {
	e, wanted, err := in.includeWanted(e)
	if err != nil {
		return nil, err
	}
	if !wanted {
		return &value{kind: kindMap, size: 1}, nil
	}
	switch e.kind {
	case "project":
		return in.includeProject(e, chain)
	case "remote":
		return in.includeRemote(e, chain)
	case "local":
	default:
		return nil, configError(fmt.Sprintf("include:%s is not supported yet (`%s`); only include:local, include:project and include:remote are", e.kind, e.where))
	}
	if e.extra != nil {
		for _, x := range e.extra.entries {
			if x.key != "local" {
				return nil, configError(fmt.Sprintf("include:local %s is not supported yet (`%s`)", x.key, e.where))
			}
		}
	}
	if strings.ContainsAny(e.where, "*?[") {
		if in.files == nil {
			return nil, configError(fmt.Sprintf("Local file `%s` cannot be included: this configuration is not read from a repository", e.where))
		}
		return in.includeGlob(e.where, chain)
	}
	return in.includeFile(e.where, chain)
}

// includeFile reads, parses and expands one local file.
func (in *includer) includeFile(where string, chain []string) (*value, error) {
	// Paths are relative to the repository's root whether or not they
	// start with a slash; ".." cannot leave it.
	p := strings.TrimPrefix(path.Clean("/"+where), "/")
	if p == "" || strings.Contains(where, "\x00") {
		return nil, configError(fmt.Sprintf("Local file `%s` does not have a valid path!", where))
	}
	if in.files == nil {
		return nil, configError(fmt.Sprintf("Local file `%s` cannot be included: this configuration is not read from a repository", p))
	}
	// A file is known by its project and ref too: the same path in two
	// projects is two files.
	id := p
	if in.project != "" {
		id = in.project + "@" + in.ref + ":" + p
	}
	for _, open := range chain {
		if open == id {
			return nil, configError(fmt.Sprintf("Local file `%s` includes itself (through %s)", p, strings.Join(append(chain, id), " > ")))
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
	src, err := in.files.Read(in.ctx, p)
	if errors.Is(err, fs.ErrNotExist) {
		if in.project != "" {
			return nil, configError(fmt.Sprintf("Project `%s` file `%s` does not exist!", in.project, p))
		}
		return nil, configError(fmt.Sprintf("Local file `%s` does not exist!", p))
	}
	if err != nil {
		return nil, err
	}
	in.size += len(src)
	if in.size > MaxIncludedBytes {
		return nil, configError(fmt.Sprintf("The CI configuration is too large: its included files hold more than %d bytes", MaxIncludedBytes))
	}
	if len(src) > MaxConfigBytes {
		return nil, configError(fmt.Sprintf("Local file `%s` is too large: %d bytes, the limit is %d bytes", p, len(src), MaxConfigBytes))
	}
	if strings.TrimSpace(string(src)) == "" {
		if in.project != "" {
			return nil, configError(fmt.Sprintf("Project `%s` file `%s` is empty!", in.project, p))
		}
		return nil, configError(fmt.Sprintf("Local file `%s` is empty!", p))
	}
	root, err := parseDocument(src, in.conv)
	if err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) && strings.Contains(ce.Error(), "too large once its aliases") {
			return nil, err
		}
		return nil, configError(fmt.Sprintf("Included file `%s` does not have valid YAML syntax!", p))
	}
	if root.kind != kindMap {
		return nil, configError(fmt.Sprintf("Included file `%s` does not have YAML mapping as root!", p))
	}
	return in.expand(root, append(chain[:len(chain):len(chain)], id))
}

// includeGlob includes every file a pattern matches, in path order, as
// GitLab does with wildcard local includes: `*` and `?` within a path
// segment, `**` as a whole segment for any depth of directories.
func (in *includer) includeGlob(pattern string, chain []string) (*value, error) {
	lister, ok := in.files.(Lister)
	if !ok {
		return nil, configError(fmt.Sprintf("Local file `%s`: wildcard includes need a repository to list", pattern))
	}
	segments := strings.Split(strings.Trim(pattern, "/"), "/")
	for _, seg := range segments {
		if _, err := path.Match(seg, ""); err != nil || seg == ".." {
			return nil, configError(fmt.Sprintf("Local file `%s` does not have a valid path!", pattern))
		}
	}
	g := globber{ctx: in.ctx, lister: lister, budget: MaxGlobVisits}
	if err := g.walk("", segments); err != nil {
		return nil, err
	}
	if len(g.found) == 0 {
		return nil, configError(fmt.Sprintf("Included file `%s` does not match any files", pattern))
	}
	sort.Strings(g.found)
	var merged *value
	r := &resolver{}
	for _, p := range g.found {
		included, err := in.includeFile(p, chain)
		if err != nil {
			return nil, err
		}
		merged = r.deepMerge(merged, included)
	}
	in.work += r.work
	return merged, r.err
}

type globber struct {
	ctx    context.Context
	lister Lister
	budget int
	found  []string
	seen   map[string]bool
}

func (g *globber) walk(dir string, segments []string) error {
	if len(segments) == 0 {
		return nil
	}
	entries, err := g.lister.List(g.ctx, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if g.budget -= len(entries); g.budget < 0 {
		return configError(fmt.Sprintf("Included files: the pattern looks at more than %d paths", MaxGlobVisits))
	}
	seg, rest := segments[0], segments[1:]
	if seg == "**" {
		// ** stands for no directory (the rest applies here) or any
		// number of them.
		if err := g.walk(dir, rest); err != nil {
			return err
		}
		for _, name := range entries {
			if strings.HasSuffix(name, "/") {
				if err := g.walk(path.Join(dir, strings.TrimSuffix(name, "/")), segments); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, name := range entries {
		isDir := strings.HasSuffix(name, "/")
		name = strings.TrimSuffix(name, "/")
		full := path.Join(dir, name)
		ok, _ := path.Match(seg, name)
		switch {
		case !ok:
		case isDir && len(rest) > 0:
			if err := g.walk(full, rest); err != nil {
				return err
			}
		case !isDir && len(rest) == 0:
			g.add(full)
		}
	}
	return nil
}

func (g *globber) add(p string) {
	if g.seen == nil {
		g.seen = map[string]bool{}
	}
	if !g.seen[p] {
		g.seen[p] = true
		g.found = append(g.found, p)
	}
}

// inputDefaults reads a header's `spec: {inputs: {name: {default: ...}}}`.
// Only inputs with a default can be used: nothing passes inputs yet.
func inputDefaults(spec *value) (map[string]string, error) {
	out := map[string]string{}
	if spec.isNull() {
		return out, nil
	}
	if spec.kind != kindMap {
		return nil, configError("header:spec config must be a hash")
	}
	inputs := spec.get("inputs")
	if inputs.isNull() {
		return out, nil
	}
	if inputs.kind != kindMap {
		return nil, configError("header:spec:inputs config must be a hash")
	}
	for _, e := range inputs.entries {
		var def *value
		if e.val.kind == kindMap {
			def = e.val.get("default")
		}
		if def == nil || (def.kind != kindScalar && !def.isNull()) {
			return nil, configError(fmt.Sprintf("`%s` input: required value has not been provided", e.key))
		}
		out[e.key] = def.text
	}
	return out, nil
}

var inputReference = regexp.MustCompile(`\$\[\[\s*inputs\.([A-Za-z0-9_-]+)\s*\]\]`)

// interpolateInputs replaces `$[[ inputs.name ]]` in every scalar of the
// document (keys included) by the input's default; an unknown input stays
// as written. budget is how many bytes the replacements may add in all, so
// a long default used many times cannot grow the document without bound.
func interpolateInputs(n *yaml.Node, defaults map[string]string, budget *int) error {
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "$[[") {
		before := len(n.Value)
		n.Value = inputReference.ReplaceAllStringFunc(n.Value, func(m string) string {
			name := inputReference.FindStringSubmatch(m)[1]
			if d, ok := defaults[name]; ok {
				return d
			}
			return m
		})
		if *budget -= len(n.Value) - before; *budget < 0 {
			return configError(fmt.Sprintf("The CI configuration is too large once its inputs are interpolated (more than %d bytes added)", MaxConfigBytes))
		}
	}
	for _, c := range n.Content {
		if err := interpolateInputs(c, defaults, budget); err != nil {
			return err
		}
	}
	return nil
}
