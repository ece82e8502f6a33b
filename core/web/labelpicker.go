package web

// The labels of an edit form (issues, merge requests): a checkbox per
// label the project sees, and a text field for any other, as the API's
// comma-separated labels (a label named there that does not exist is
// made, as the API makes it). Without JavaScript, a picker is a form's
// plain fields; the modules give the labels they keep.

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// LabelChoice is one label of a picker: its name, its colour (checked by
// NewLabelPicker: a fill of an SVG dot, as the CSP allows no inline
// style) and whether the target has it.
type LabelChoice struct {
	Name, Color string
	Checked     bool
}

// LabelPicker is the template "labelpicker"'s data.
type LabelPicker struct {
	// ID is the text field's id (for its label).
	ID      string
	Choices []LabelChoice
	// Other are the target's labels that are not among Choices, comma
	// separated (the text field's value).
	Other string
}

var labelColor = regexp.MustCompile(`^#(?:[0-9A-Fa-f]{3}){1,2}$`)

// NewLabelPicker is the picker of a target with the labels current, among
// the labels available (the first of a name is kept: a project's label
// hides its group's of the same name, as the API finds them).
func NewLabelPicker(id string, current []string, available ...LabelChoice) LabelPicker {
	p := LabelPicker{ID: id}
	for _, c := range available {
		if slices.ContainsFunc(p.Choices, func(o LabelChoice) bool { return o.Name == c.Name }) {
			continue
		}
		if !labelColor.MatchString(c.Color) {
			c.Color = "#888888"
		}
		c.Checked = slices.Contains(current, c.Name)
		p.Choices = append(p.Choices, c)
	}
	var other []string
	for _, name := range current {
		if !slices.ContainsFunc(p.Choices, func(o LabelChoice) bool { return o.Name == name }) {
			other = append(other, name)
		}
	}
	p.Other = strings.Join(other, ", ")
	return p
}

// PostedLabels are the labels a picker posted: the boxes checked, then
// the text field's names, trimmed, each once. given says whether the form
// had a picker at all (a form without one leaves the labels as they are).
func PostedLabels(r *http.Request) (labels []string, given bool) {
	checked, hasBoxes := r.PostForm["label"]
	_, hasText := r.PostForm["labels"]
	labels = []string{}
	for _, name := range append(slices.Clone(checked), strings.Split(r.PostFormValue("labels"), ",")...) {
		name = strings.TrimSpace(name)
		if name != "" && !slices.Contains(labels, name) {
			labels = append(labels, name)
		}
	}
	return labels, hasBoxes || hasText
}
