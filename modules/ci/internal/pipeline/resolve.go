package pipeline

import (
	"fmt"
	"strings"
)

// This file resolves what current GitLab builds between reading the YAML
// and validating jobs: `extends` (a job takes the keys of the jobs or hidden
// templates it names, deep-merged) and then `!reference [name, key, ...]`
// tags (a value copied from elsewhere in the file). Both work on the shared,
// read-only value tree: a merge builds new mappings only where two mappings
// meet, and everything else is shared. Every mapping entry a merge visits
// and every node the reference pass visits is counted against maxResolveWork
// so that a file of fan-outs (a thousand jobs extending a template of
// thousands of keys) is refused instead of growing.

const (
	// maxExtendsDepth is how many levels of inheritance GitLab allows: a job
	// and ten ancestors.
	maxExtendsDepth = 11
	// maxReferenceDepth bounds !reference tags that reach values holding
	// !reference tags themselves.
	maxReferenceDepth = 10
	// maxResolveWork bounds the entries extends merges and the nodes the
	// reference pass visits, together.
	maxResolveWork = 1_000_000
	// maxScriptNesting is how deep lists may nest in a script (anchors of
	// lists inside lists); GitLab flattens up to ten levels.
	maxScriptNesting = 10
)

// resolver holds the state of one configuration's extends and references.
type resolver struct {
	root  *value
	index map[string]int // top-level key -> position in root.entries
	// done holds the resolved values of top-level entries; open marks
	// those being resolved, to find cycles.
	done   map[string]*value
	height map[string]int
	open   map[string]bool
	work   int
	err    error
}

func newResolver(root *value) *resolver {
	r := &resolver{
		root:   root,
		index:  make(map[string]int, len(root.entries)),
		done:   make(map[string]*value),
		height: make(map[string]int),
		open:   make(map[string]bool),
	}
	for i, e := range root.entries {
		if _, dup := r.index[e.key]; !dup {
			r.index[e.key] = i
		}
	}
	return r
}

func (r *resolver) fail(format string, args ...any) {
	if r.err == nil {
		r.err = configError(fmt.Sprintf(format, args...))
	}
}

// spend counts n units of work; false once the budget is spent.
func (r *resolver) spend(n int) bool {
	r.work += n
	if r.work > maxResolveWork && r.err == nil {
		r.fail("The CI configuration is too large: extends and !reference expand it past %d entries", maxResolveWork)
	}
	return r.err == nil
}

// resolveExtends returns root with every top-level mapping's `extends`
// applied.
func resolveExtends(root *value) (*value, int, error) {
	r := newResolver(root)
	changed := false
	for _, e := range root.entries {
		if e.val.kind == kindMap && e.val.get("extends") != nil {
			changed = true
			break
		}
	}
	if !changed {
		return root, 0, nil
	}
	out := &value{kind: kindMap, tag: root.tag, line: root.line, column: root.column, size: 1}
	out.entries = make([]entry, len(root.entries))
	for i, e := range root.entries {
		v := r.extended(e.key, 0)
		if r.err != nil {
			return nil, r.work, r.err
		}
		out.entries[i] = entry{e.key, v}
		out.size += 1 + v.size
	}
	return out, r.work, nil
}

// extended returns the top-level entry key with its extends applied;
// depth is how many jobs extend it along the path that reached it.
func (r *resolver) extended(key string, depth int) *value {
	if v, ok := r.done[key]; ok {
		if depth+r.height[key] >= maxExtendsDepth {
			r.fail("%s: nesting too deep in `extends`", key)
		}
		return v
	}
	own := r.root.entries[r.index[key]].val
	bases := own.get("extends")
	if own.kind != kindMap || bases.isNull() {
		r.done[key], r.height[key] = own, 0
		return own
	}
	if r.open[key] {
		r.fail("%s: circular dependency detected in `extends`", key)
		return own
	}
	if depth >= maxExtendsDepth-1 {
		r.fail("%s: nesting too deep in `extends`", key)
		return own
	}
	names, ok := stringItems(bases)
	if bases.isString() {
		names, ok = []string{bases.text}, true
	}
	if !ok {
		r.fail("jobs:%s extends should be an array of strings or a string", key)
		return own
	}
	r.open[key] = true
	defer delete(r.open, key)
	var merged *value
	height := 0
	for _, name := range names {
		if _, exists := r.index[name]; !exists {
			r.fail("%s: unknown keys in `extends` (%s)", key, name)
			return own
		}
		base := r.extended(name, depth+1)
		if r.err != nil {
			return own
		}
		if base.kind != kindMap {
			r.fail("%s: invalid base hash in `extends`", key)
			return own
		}
		height = max(height, r.height[name]+1)
		if merged == nil {
			merged = base
		} else {
			merged = r.deepMerge(merged, base)
		}
	}
	v := r.deepMerge(merged, own)
	// The job shares its bases' values, but validating it reads them all.
	r.spend(v.size)
	r.done[key], r.height[key] = v, height
	return v
}

// deepMerge lays over on top of base: mappings meet key by key, anything
// else (lists included) is replaced by over's value. Keys keep base's order,
// over's new keys follow in its order (Ruby's deep_merge).
func (r *resolver) deepMerge(base, over *value) *value {
	if base == nil || base.kind != kindMap || over.kind != kindMap {
		return over
	}
	if !r.spend(len(base.entries) + len(over.entries)) {
		return over
	}
	h := orderedMap{index: make(map[string]int, len(base.entries)+len(over.entries))}
	for _, e := range base.entries {
		h.set(e.key, e.val)
	}
	for _, e := range over.entries {
		if i, ok := h.index[e.key]; ok {
			h.entries[i].val = r.deepMerge(h.entries[i].val, e.val)
			continue
		}
		h.set(e.key, e.val)
	}
	out := &value{kind: kindMap, tag: over.tag, line: over.line, column: over.column, size: 1, entries: h.entries}
	for _, e := range out.entries {
		out.size += 1 + e.val.size
	}
	return out
}

// resolveReferences replaces every `!reference [name, key, ...]` of root
// by the value it names, looked up in root (whose extends are applied).
func resolveReferences(root *value) (*value, int, error) {
	r := newResolver(root)
	memo := make(map[*value]*value)
	out := r.references(root, memo, 0)
	return out, r.work, r.err
}

// references returns v with its !reference tags resolved; depth counts the
// references followed to get here. Values without tags are returned as
// they are, and each node is visited once (memo), so shared subtrees cost
// their size once.
func (r *resolver) references(v *value, memo map[*value]*value, depth int) *value {
	if v == nil || r.err != nil {
		return v
	}
	if done, ok := memo[v]; ok {
		return done
	}
	if !r.spend(1) {
		return v
	}
	out := v
	switch {
	case v.tag == "!reference":
		out = r.reference(v, memo, depth)
	case v.kind == kindSeq:
		var items []*value
		for i, item := range v.items {
			ri := r.references(item, memo, depth)
			if ri != item && items == nil {
				items = append(make([]*value, 0, len(v.items)), v.items[:i]...)
			}
			if items != nil {
				items = append(items, ri)
			}
		}
		if items != nil {
			out = &value{kind: kindSeq, tag: v.tag, line: v.line, column: v.column, items: items, size: 1}
			for _, item := range items {
				out.size += item.size
			}
		}
	case v.kind == kindMap:
		var entries []entry
		for i, e := range v.entries {
			re := r.references(e.val, memo, depth)
			if re != e.val && entries == nil {
				entries = append(make([]entry, 0, len(v.entries)), v.entries[:i]...)
			}
			if entries != nil {
				entries = append(entries, entry{e.key, re})
			}
		}
		if entries != nil {
			out = &value{kind: kindMap, tag: v.tag, line: v.line, column: v.column, entries: entries, size: 1}
			for _, e := range entries {
				out.size += 1 + e.val.size
			}
		}
	}
	if depth == 0 {
		memo[v] = out
	}
	return out
}

// reference resolves one tag.
func (r *resolver) reference(v *value, memo map[*value]*value, depth int) *value {
	path, ok := stringItems(v)
	if !ok || len(path) == 0 {
		r.fail("!reference tags must be a non-empty array of strings, at line %d column %d", v.line, v.column)
		return v
	}
	quoted := make([]string, len(path))
	for i, p := range path {
		quoted[i] = fmt.Sprintf("%q", p)
	}
	shown := "!reference [" + strings.Join(quoted, ", ") + "]"
	if depth >= maxReferenceDepth {
		r.fail("%s is nested more than %d references deep", shown, maxReferenceDepth)
		return v
	}
	target := r.root
	for _, key := range path {
		if target.kind != kindMap {
			target = nil
			break
		}
		if target = target.get(key); target == nil {
			break
		}
	}
	if target == nil {
		r.fail("%s could not be found", shown)
		return v
	}
	out := r.references(target, memo, depth+1)
	// The copy shares its nodes, but what reads it later (a script
	// flattened, a job's lists) pays for its full size: charge it here.
	r.spend(out.size)
	return out
}
