package pipeline

import (
	"strings"
	"testing"
)

// TestMergeKeyOrder pins merge keys to what GitLab's loader (Psych)
// builds: entries apply in written order, a later one over an earlier one,
// and within `<<: [*a, *b]` the earlier source wins. The expected column
// lists each key=value of the mapping under `m` in its resulting order.
func TestMergeKeyOrder(t *testing.T) {
	t.Parallel()
	anchors := ".a: &a {x: a, y: a}\n.b: &b {y: b, z: b}\n"
	cases := []struct{ name, m, want string }{
		{"keys below a merge win", "{<<: *a, x: own}", "x=own y=a"},
		{"a merge below keys wins", "{x: own, <<: *a}", "x=a y=a"},
		{"the later of two merges wins", "{<<: *a, <<: *b}", "x=a y=b z=b"},
		{"the earlier source of a list wins", "{<<: [*a, *b]}", "y=a z=b x=a"},
		{"a list then own keys", "{<<: [*b, *a], z: own}", "x=a y=b z=own"},
		{"a key written twice keeps its first place", "{x: 1, w: 2, x: 3}", "x=3 w=2"},
		{"an inline mapping merges too", "{<<: {x: inline}, y: own}", "x=inline y=own"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root, err := parseYAML([]byte(anchors + "m: " + c.m + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range root.get("m").entries {
				got = append(got, e.key+"="+e.val.text)
			}
			if strings.Join(got, " ") != c.want {
				t.Errorf("m = %s, want %s", strings.Join(got, " "), c.want)
			}
		})
	}
}

// A job written with its template merged below its own keys takes the
// template's values, as GitLab does: the order in the file is the order of
// precedence.
func TestMergeKeyBelowJobKeys(t *testing.T) {
	t.Parallel()
	cfg := mustParse(t, ".t: &t {stage: build, script: [template]}\nj:\n  script: [own]\n  <<: *t\n")
	j := jobNamed(t, cfg, "j")
	if j.Stage != "build" || len(j.Script) != 1 || j.Script[0] != "template" {
		t.Errorf("job = %+v", j)
	}
}
