package user_test

import (
	"encoding/json"
	"testing"

	"github.com/fennec-forge/fennec/modules/identity/user"
)

func TestNewBasicUser(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		info user.Info
		want string
	}{
		{"plain", user.Info{ID: 7, Username: "alice", Name: "Alice A.", State: "active", AvatarURL: "https://avatar/a"},
			`{"id":7,"name":"Alice A.","username":"alice","state":"active","avatar_url":"https://avatar/a","web_url":"http://h/alice"}`},
		// Not a username identity admits today; web_url must stay one valid path segment anyway.
		{"escaped", user.Info{ID: 8, Username: "a b/c?d", Name: "B", State: "blocked", AvatarURL: "x"},
			`{"id":8,"name":"B","username":"a b/c?d","state":"blocked","avatar_url":"x","web_url":"http://h/a%20b%2Fc%3Fd"}`},
		{"no avatar", user.Info{ID: 9, Username: "c", State: "active"},
			`{"id":9,"name":"","username":"c","state":"active","avatar_url":null,"web_url":"http://h/c"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := json.Marshal(user.NewBasicUser("http://h", c.info))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestGhostUser(t *testing.T) {
	t.Parallel()
	got, _ := json.Marshal(user.GhostUser("http://h", 42))
	want := `{"id":42,"name":"Ghost User","username":"ghost","state":"blocked","avatar_url":null,"web_url":"http://h/ghost"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
