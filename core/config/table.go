package config

// The settings table: every setting of the core and of the loaded modules'
// sections, generated from the struct tags, so `fennec config` and the
// README cannot drift from the code.

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"
)

// Setting is one row of the settings table.
type Setting struct {
	Key, Env, Flag, Default, Help string
	// TopLevel is the key (or the key above it) still accepted at the top
	// level of the file, where it was before sections.
	TopLevel string
}

// Settings lists the core's settings, then each section's.
func Settings(sections []Section) []Setting {
	out := []Setting{{Key: "", Env: "FENNEC_CONFIG", Flag: "config", Default: "none", Help: "the YAML file"}}
	out = append(out, settingsOf(reflect.ValueOf(Default()), "", "")...)
	for _, s := range sections {
		out = append(out, settingsOf(reflect.ValueOf(s.Defaults), s.Name, "FENNEC_"+strings.ToUpper(s.Name)+"_")...)
	}
	return out
}

func settingsOf(v reflect.Value, section, envPrefix string) []Setting {
	var out []Setting
	for _, f := range fields(v.Type()) {
		key := f.key
		if section != "" {
			key = section + "." + key
		}
		def := f.def
		if def == "" {
			def = showValue(v.FieldByIndex(f.index))
		}
		out = append(out, Setting{Key: key, Env: f.envName(envPrefix), Flag: f.flag, Default: def, Help: f.help, TopLevel: f.top})
	}
	return out
}

func showValue(v reflect.Value) string {
	if v.Type() == durationType {
		s := time.Duration(v.Int()).String()
		// 1h0m0s reads better as 1h.
		if strings.HasSuffix(s, "m0s") {
			s = strings.TrimSuffix(s, "0s")
		}
		if strings.HasSuffix(s, "h0m") {
			s = strings.TrimSuffix(s, "0m")
		}
		return s
	}
	if v.IsZero() && v.Kind() != reflect.Bool && v.Kind() != reflect.Int && v.Kind() != reflect.Int64 {
		return "none"
	}
	return fmt.Sprint(v.Interface())
}

// WriteText writes the table for a terminal.
func WriteText(w io.Writer, settings []Setting) {
	for _, s := range settings {
		key := s.Key
		if key == "" {
			key = "(file)"
		}
		var where []string
		if s.Flag != "" {
			where = append(where, "--"+s.Flag)
		}
		if s.Env != "" {
			where = append(where, s.Env)
		}
		where = append(where, "default "+s.Default)
		fmt.Fprintf(w, "  %s  (%s)\n      %s\n", key, strings.Join(where, ", "), s.Help)
		if s.TopLevel != "" {
			fmt.Fprintf(w, "      (also accepted in %s at the top level, its old place)\n", s.TopLevel)
		}
	}
}

// WriteMarkdown writes the table as the README shows it.
func WriteMarkdown(w io.Writer, settings []Setting) {
	code := func(s string) string {
		if s == "" {
			return ""
		}
		return "`" + s + "`"
	}
	fmt.Fprintln(w, "| flag | environment | YAML key | default | meaning |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, s := range settings {
		flag := ""
		if s.Flag != "" {
			flag = code("--" + s.Flag)
		}
		help := s.Help
		if s.TopLevel != "" {
			help += fmt.Sprintf(" (top-level `%s` still accepted)", s.TopLevel)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", flag, code(s.Env), code(s.Key), code(s.Default), strings.ReplaceAll(help, "|", "\\|"))
	}
}
