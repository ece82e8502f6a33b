package pipeline

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// This file turns yaml.v3's node graph into a tree of values with aliases
// and merge keys (`<<:`) resolved, within fixed bounds. yaml.v3 leaves
// aliases as pointers to their anchor when it decodes into a yaml.Node, so a
// "billion laughs" document costs nothing until something expands it; here
// an alias shares the already converted value of its anchor instead of
// copying it, and every alias is charged the full size of what it stands
// for. Past maxExpandedNodes the document is refused, so neither time nor
// memory can grow beyond a multiple of the limit whatever the input.

const (
	// maxExpandedNodes bounds the size of the document once every alias is
	// counted at its full size. A large real configuration (a thousand jobs
	// sharing templates) stays well under it.
	maxExpandedNodes = 1_000_000
	// maxDepth bounds nesting; a .gitlab-ci.yml is rarely deeper than six.
	maxDepth = 100
)

type kind uint8

const (
	kindNull kind = iota
	kindScalar
	kindSeq
	kindMap
)

// value is one YAML value after alias and merge resolution. Values reached
// through an alias are shared, never mutated after construction.
type value struct {
	kind    kind
	tag     string // resolved short tag of a scalar: !!str, !!int, !!bool, !!float, ...
	text    string // a scalar's text
	plain   bool   // a scalar written without quotes or block style
	items   []*value
	entries []entry
	line    int
	column  int
	// size counts the nodes of the value with every shared subtree counted
	// each time it appears: what a naive expansion would build.
	size int
}

type entry struct {
	key string
	val *value
}

// get returns the value under key in a mapping, or nil.
func (v *value) get(key string) *value {
	for i := range v.entries {
		if v.entries[i].key == key {
			return v.entries[i].val
		}
	}
	return nil
}

// isNull reports whether v is absent or an explicit null: GitLab treats a
// key with no value as if it were not written.
func (v *value) isNull() bool { return v == nil || v.kind == kindNull }

// isString reports whether v is a scalar that YAML resolves to a string.
func (v *value) isString() bool { return v != nil && v.kind == kindScalar && v.tag == "!!str" }

// describe names the YAML type of v for error messages.
func (v *value) describe() string {
	switch {
	case v.isNull():
		return "null"
	case v.kind == kindSeq:
		return "array"
	case v.kind == kindMap:
		return "hash"
	}
	return strings.TrimPrefix(v.tag, "!!")
}

// yamlError is a YAML-level problem (syntax, aliases, limits), worded the
// way GitLab shows Psych's errors: "(<unknown>): <problem> at line L column C".
func yamlError(line, column int, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if line > 0 {
		msg += fmt.Sprintf(" at line %d column %d", line, column)
	}
	return &ConfigError{Messages: []string{"(<unknown>): " + msg}}
}

type converter struct {
	budget int
	// done memoizes converted anchors so that aliases share them.
	done map[*yaml.Node]*value
	// open holds the anchors being converted: an alias to one of them is a
	// cycle (yaml.v3 lets `&a [*a]` through as a self-referencing graph).
	open map[*yaml.Node]bool
	// references is set once a `!reference` tag is seen: only then does
	// the reference pass walk the tree.
	references bool
}

func newConverter() *converter {
	return &converter{
		budget: maxExpandedNodes,
		done:   make(map[*yaml.Node]*value),
		open:   make(map[*yaml.Node]bool),
	}
}

// charge spends n nodes of the expansion budget.
func (c *converter) charge(n int, at *yaml.Node) error {
	c.budget -= n
	if c.budget < 0 {
		return yamlError(at.Line, at.Column,
			"the document is too large once its aliases are expanded (more than %d nodes)", maxExpandedNodes)
	}
	return nil
}

func (c *converter) convert(n *yaml.Node, depth int) (*value, error) {
	if depth > maxDepth {
		return nil, yamlError(n.Line, n.Column, "the document is nested more than %d levels deep", maxDepth)
	}
	if n.Kind == yaml.AliasNode {
		target := n.Alias
		if target == nil {
			return nil, yamlError(n.Line, n.Column, "unknown alias *%s", n.Value)
		}
		if c.open[target] {
			return nil, yamlError(n.Line, n.Column, "alias *%s refers to a value that contains it", n.Value)
		}
		v, ok := c.done[target]
		if !ok {
			var err error
			if v, err = c.convert(target, depth); err != nil {
				return nil, err
			}
		} else if err := c.charge(v.size, n); err != nil {
			return nil, err
		}
		return v, nil
	}
	if n.Anchor != "" {
		if v, ok := c.done[n]; ok {
			return v, nil
		}
		c.open[n] = true
		defer delete(c.open, n)
	}
	if err := c.charge(1, n); err != nil {
		return nil, err
	}
	v := &value{line: n.Line, column: n.Column, size: 1, tag: n.ShortTag()}
	if v.tag == "!reference" {
		c.references = true
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			v.kind = kindNull
			break
		}
		return c.convert(n.Content[0], depth)
	case yaml.ScalarNode:
		v.text = n.Value
		v.kind = kindScalar
		v.plain = n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0
		if v.tag == "!!null" {
			v.kind = kindNull
		}
	case yaml.SequenceNode:
		v.kind = kindSeq
		v.items = make([]*value, 0, len(n.Content))
		for _, item := range n.Content {
			iv, err := c.convert(item, depth+1)
			if err != nil {
				return nil, err
			}
			v.items = append(v.items, iv)
			v.size += iv.size
		}
	case yaml.MappingNode:
		if err := c.mapping(n, v, depth); err != nil {
			return nil, err
		}
	default:
		return nil, yamlError(n.Line, n.Column, "unexpected YAML node")
	}
	if n.Anchor != "" {
		c.done[n] = v
	}
	return v, nil
}

// mapping converts a mapping node the way GitLab's YAML loader (Ruby's
// Psych) builds a hash: entries apply in the order written, each over what
// came before. A key written twice keeps its first position and its last
// value; a `<<` merges its mapping over the keys so far (keys written above
// it are overridden, keys written below override it), new keys following
// in the merged mapping's order. In `<<: [*a, *b]` the earlier source wins.
func (c *converter) mapping(n *yaml.Node, v *value, depth int) error {
	v.kind = kindMap
	h := orderedMap{index: make(map[string]int, len(n.Content)/2)}
	for i := 0; i+1 < len(n.Content); i += 2 {
		keyNode, valNode := n.Content[i], n.Content[i+1]
		key, err := c.convert(keyNode, depth+1)
		if err != nil {
			return err
		}
		if key.kind == kindMap || key.kind == kindSeq {
			return yamlError(keyNode.Line, keyNode.Column, "a mapping key must be a scalar, not a %s", key.describe())
		}
		val, err := c.convert(valNode, depth+1)
		if err != nil {
			return err
		}
		if key.tag == "!!merge" {
			merged, err := c.mergeSources(val, valNode)
			if err != nil {
				return err
			}
			for _, e := range merged {
				h.set(e.key, e.val)
			}
			continue
		}
		h.set(key.text, val)
	}
	v.entries = h.entries
	for _, e := range v.entries {
		v.size += 1 + e.val.size
	}
	return nil
}

// orderedMap is a Ruby hash: keys keep the position of their first
// assignment and the value of their last.
type orderedMap struct {
	entries []entry
	index   map[string]int
}

func (h *orderedMap) set(key string, val *value) {
	if i, ok := h.index[key]; ok {
		h.entries[i].val = val
		return
	}
	h.index[key] = len(h.entries)
	h.entries = append(h.entries, entry{key, val})
}

// mergeSources returns the entries a `<<` key brings in, as one mapping: a
// mapping, or a sequence of mappings where the earlier wins. As Psych does,
// the sequence is folded from its end, so a key's position is that of its
// first appearance counting from the last source.
func (c *converter) mergeSources(val *value, at *yaml.Node) ([]entry, error) {
	var sources []*value
	switch val.kind {
	case kindMap:
		sources = []*value{val}
	case kindSeq:
		sources = val.items
	default:
		return nil, yamlError(at.Line, at.Column, "a merge key (<<) must be followed by a mapping or a list of mappings")
	}
	if len(sources) == 1 && sources[0].kind == kindMap {
		if err := c.charge(len(sources[0].entries), at); err != nil {
			return nil, err
		}
		return sources[0].entries, nil
	}
	h := orderedMap{index: make(map[string]int)}
	for i := len(sources) - 1; i >= 0; i-- {
		s := sources[i]
		if s.kind != kindMap {
			return nil, yamlError(at.Line, at.Column, "a merge key (<<) must be followed by a mapping or a list of mappings")
		}
		// Copying the entries costs what it builds.
		if err := c.charge(len(s.entries), at); err != nil {
			return nil, err
		}
		for _, e := range s.entries {
			h.set(e.key, e.val)
		}
	}
	return h.entries, nil
}
