package config

// Module sections: each module declares its settings as a struct of its own
// (a Section) and the core decodes it from the module's part of the file,
// the environment and the values a host or test sets, so a module adds
// settings without editing core. The struct's tags say everything about a
// setting once: the YAML key (yaml), the environment variable (env, else
// FENNEC_<SECTION>_<KEY>), a command-line flag of serve if it deserves
// one (flag), its meaning (help), how to show a default that
// is not a plain value (default), and whether its key is still accepted at
// the top level of the file, where it lived before sections (toplevel).

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Section describes one module's settings: Defaults is a struct value
// whose fields carry the tags above.
type Section struct {
	Name     string
	Defaults any
}

// SetModule sets the section's setting key (a YAML key; a nested one as a
// map) to value, above the file and the environment: for hosts and tests.
// A section no loaded module declares is ignored.
func (c *Config) SetModule(section, key string, value any) {
	c.addOverride(section, func(target any) error {
		return strictDecode(map[string]any{key: value}, target)
	})
}

// Modify changes the section's typed settings with fn, above the file and
// the environment (see SetModule). T must be the module's settings type.
func Modify[T any](c *Config, section string, fn func(*T)) {
	c.addOverride(section, func(target any) error {
		p, ok := target.(*T)
		if !ok {
			return fmt.Errorf("config: section %s holds %T, not *%T", section, target, *new(T))
		}
		fn(p)
		return nil
	})
}

// moduleFlag is the command-line flag of a section's setting (flag tag).
type moduleFlag struct {
	section, key, name string
	value              *string
}

func moduleFlags(fs *flag.FlagSet, sections []Section) []moduleFlag {
	var out []moduleFlag
	for _, s := range sections {
		prefix := "FENNEC_" + strings.ToUpper(s.Name) + "_"
		v := reflect.ValueOf(s.Defaults)
		for _, f := range fields(v.Type()) {
			if f.flag == "" {
				continue
			}
			def := f.def
			if def == "" {
				def = showValue(v.FieldByIndex(f.index))
			}
			usage := fmt.Sprintf("%s; default %s (env %s, YAML %s.%s)", f.help, def, f.envName(prefix), s.Name, f.key)
			out = append(out, moduleFlag{section: s.Name, key: f.key, name: f.flag, value: fs.String(f.flag, "", usage)})
		}
	}
	return out
}

// setString sets the section's setting key from a flag's text, above the
// environment, as the core's flags are.
func (c *Config) setString(section, key, flagName, text string) {
	c.addOverride(section, func(target any) error {
		v := reflect.ValueOf(target).Elem()
		for _, f := range fields(v.Type()) {
			if f.key == key {
				if err := setFromString(v.FieldByIndex(f.index), text); err != nil {
					return fmt.Errorf("--%s: %w", flagName, err)
				}
				return nil
			}
		}
		return fmt.Errorf("--%s: no setting %s", flagName, key)
	})
}

func (c *Config) addOverride(section string, fn func(any) error) {
	// Copy on write: Config is passed by value and copies must not share
	// later changes.
	next := make(map[string][]func(any) error, len(c.overrides)+1)
	for k, v := range c.overrides {
		next[k] = v
	}
	next[section] = append(append([]func(any) error(nil), c.overrides[section]...), fn)
	c.overrides = next
}

// Decode fills target (a pointer to the section's struct, holding its
// defaults) in rising precedence: keys still given at the top level of the
// file (toplevel), the section in the file, the environment, then flags,
// SetModule and Modify in the order they were set (Load sets flags first);
// then target's Validate, if it has one. Unknown keys are an error.
func (c Config) Decode(section string, target any) error {
	rv := reflect.ValueOf(target)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("config: section %s: decode into %T, want a pointer to a struct", section, target)
	}
	old := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, key := range topLevelKeys(rv.Elem().Type()) {
		if n, ok := c.Modules[key]; ok {
			old.Content = append(old.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: n.Line}, &n)
		}
	}
	if len(old.Content) > 0 {
		if err := decodeNode(old, target); err != nil {
			return fmt.Errorf("config: %w", err)
		}
	}
	if n, ok := c.Modules[section]; ok {
		if err := decodeNode(&n, target); err != nil {
			return fmt.Errorf("config: section %s: %w", section, err)
		}
	}
	if c.Getenv != nil {
		if err := applyEnv(rv.Elem(), "FENNEC_"+strings.ToUpper(section)+"_", c.Getenv); err != nil {
			return err
		}
	}
	for _, fn := range c.overrides[section] {
		if err := fn(target); err != nil {
			return fmt.Errorf("config: section %s: %w", section, err)
		}
	}
	if v, ok := target.(interface{ Validate() error }); ok {
		return v.Validate()
	}
	return nil
}

// CheckSections refuses top-level keys of the file that are neither core's
// nor a loaded module's section (or one of its old top-level keys), so a
// typo does not pass silently.
func (c Config) CheckSections(sections []Section) error {
	known := map[string]bool{}
	for _, s := range sections {
		known[s.Name] = true
		for _, key := range topLevelKeys(reflect.TypeOf(s.Defaults)) {
			known[key] = true
		}
	}
	var unknown []string
	for k := range c.Modules {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("config: unknown key %s (neither a core setting nor a loaded module's section)", strings.Join(unknown, ", "))
	}
	return nil
}

// MovedKeys are the top-level keys of the file that belong to a section
// now, each as "key: section.key", so the host can tell the operator where
// they moved while they keep working.
func (c Config) MovedKeys(sections []Section) []string {
	var out []string
	for _, s := range sections {
		for _, key := range topLevelKeys(reflect.TypeOf(s.Defaults)) {
			if _, ok := c.Modules[key]; ok {
				out = append(out, key+": "+s.Name+"."+key)
			}
		}
	}
	sort.Strings(out)
	return out
}

// decodeNode decodes a node of the file into target after checking its
// keys against target's fields: yaml.Node.Decode has no KnownFields, and
// decoding the node itself keeps the file's line numbers in its errors.
func decodeNode(n *yaml.Node, target any) error {
	if err := checkKeys(n, reflect.TypeOf(target).Elem()); err != nil {
		return err
	}
	return n.Decode(target)
}

func checkKeys(n *yaml.Node, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind != yaml.MappingNode || t.Kind() != reflect.Struct || t == durationType {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		sf, ok := fieldByKey(t, k.Value)
		if !ok {
			return fmt.Errorf("line %d: field %s not found in type %s", k.Line, k.Value, t)
		}
		if err := checkKeys(n.Content[i+1], sf.Type); err != nil {
			return err
		}
	}
	return nil
}

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if sf.IsExported() && name == key {
			return sf, true
		}
	}
	return reflect.StructField{}, false
}

// strictDecode decodes v (a value or a *yaml.Node) into target, refusing
// keys target has no field for; yaml.Node.Decode cannot, so it goes
// through the text.
func strictDecode(v any, target any) error {
	raw, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(target); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

type field struct {
	index []int
	key   string // YAML key, dotted below the first level
	env   string // explicit env tag
	flag  string
	help  string
	def   string // default as shown, when not the value itself
	top   string // the first-level key, when it is still accepted at the top level
}

var durationType = reflect.TypeOf(time.Duration(0))

// fields lists the settings of a struct type, nested structs flattened to
// their leaves.
func fields(t reflect.Type) []field {
	var out []field
	var walk func(t reflect.Type, index []int, prefix, top string)
	walk = func(t reflect.Type, index []int, prefix, top string) {
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
			if !sf.IsExported() || name == "-" || name == "" {
				continue
			}
			idx := append(append([]int(nil), index...), i)
			if prefix == "" && sf.Tag.Get("toplevel") != "" {
				top = name
			} else if prefix == "" {
				top = ""
			}
			if sf.Type.Kind() == reflect.Struct && sf.Type != durationType && sf.Tag.Get("help") == "" {
				walk(sf.Type, idx, prefix+name+".", top)
				continue
			}
			out = append(out, field{index: idx, key: prefix + name, env: sf.Tag.Get("env"), flag: sf.Tag.Get("flag"),
				help: sf.Tag.Get("help"), def: sf.Tag.Get("default"), top: top})
		}
	}
	walk(t, nil, "", "")
	return out
}

// topLevelKeys are the first-level keys of a section still accepted at the
// top level of the file (toplevel tag), where they were before sections.
func topLevelKeys(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if sf.IsExported() && name != "" && name != "-" && sf.Tag.Get("toplevel") != "" {
			out = append(out, name)
		}
	}
	return out
}

// envName is a field's environment variable: its env tag, else, in a
// section (prefix set), FENNEC_<SECTION>_<KEY>; core fields without a tag
// have none.
func (f field) envName(prefix string) string {
	if f.env != "" || prefix == "" {
		return f.env
	}
	return prefix + strings.ToUpper(strings.ReplaceAll(f.key, ".", "_"))
}

// applyEnv sets every field of v whose variable is set and not empty.
func applyEnv(v reflect.Value, prefix string, getenv func(string) (string, bool)) error {
	for _, f := range fields(v.Type()) {
		name := f.envName(prefix)
		if name == "" {
			continue
		}
		s, ok := getenv(name)
		if !ok || s == "" {
			continue
		}
		if err := setFromString(v.FieldByIndex(f.index), s); err != nil {
			return fmt.Errorf("config: %s: %w", name, err)
		}
	}
	return nil
}

func setFromString(v reflect.Value, s string) error {
	if v.Type() == durationType {
		d, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		v.SetInt(int64(d))
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return err
		}
		v.SetInt(n)
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.String {
			return fmt.Errorf("cannot be set from the environment")
		}
		v.Set(reflect.ValueOf(strings.Split(s, ",")))
	default:
		return fmt.Errorf("cannot be set from the environment")
	}
	return nil
}
