package fennec

// What each module's registrations need, kept beside their fx options so
// that a missing dependency is reported as "module X needs Y, which no
// loaded module provides" rather than as fx's chain of constructors.

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"go.uber.org/fx"
)

// needing is a registration (a Part) with the parameter types its
// functions take; NewModule collects them.
type needing struct {
	fx.Option
	needs []reflect.Type
}

// withNeeds wraps opt with the parameters of fns.
func withNeeds(opt fx.Option, fns ...any) Part {
	var needs []reflect.Type
	for _, fn := range fns {
		t := reflect.TypeOf(fn)
		for i := range t.NumIn() {
			needs = append(needs, paramTypes(t.In(i))...)
		}
	}
	return needing{Option: opt, needs: needs}
}

var inType = reflect.TypeFor[In]()

// paramTypes are the values a parameter of type t asks for: t itself, or
// the fields of an In struct that are neither optional nor a group.
func paramTypes(t reflect.Type) []reflect.Type {
	if t.Kind() != reflect.Struct || !embedsIn(t) {
		return []reflect.Type{t}
	}
	var out []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type == inType {
			continue
		}
		if f.Tag.Get("optional") == "true" || f.Tag.Get("group") != "" {
			continue
		}
		out = append(out, paramTypes(f.Type)...)
	}
	return out
}

func embedsIn(t reflect.Type) bool {
	for i := range t.NumField() {
		if f := t.Field(i); f.Anonymous && f.Type == inType {
			return true
		}
	}
	return false
}

// missingTypes finds the types dig says no constructor provides.
var missingTypes = regexp.MustCompile(`missing types?: ([^\n]+?)(?:$|\n)`)

// explainMissing rewrites an error of fx's about missing types as which
// loaded module needs which of them; nil when err is not about that or no
// module's registrations name the type (a core value, say).
func explainMissing(err error, mods []Module) error {
	m := missingTypes.FindStringSubmatch(err.Error())
	if m == nil {
		return nil
	}
	var missing []string
	for _, name := range strings.Split(m[1], ";") {
		// dig may add "(did you mean ...?)" after a type.
		name, _, _ = strings.Cut(strings.TrimSpace(name), " ")
		missing = append(missing, name)
	}
	var lines []string
	for _, mod := range mods {
		var needs []string
		for _, t := range mod.needs {
			if s := t.String(); slices.Contains(missing, s) && !slices.Contains(needs, s) {
				needs = append(needs, s)
			}
		}
		if len(needs) > 0 {
			lines = append(lines, fmt.Sprintf("module %s needs %s, which no loaded module provides", mod.name, strings.Join(needs, ", ")))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("fennec: %s", strings.Join(lines, "; "))
}
