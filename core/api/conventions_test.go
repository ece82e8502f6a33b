package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/config"
	"github.com/fennec-forge/fennec/core/fennectest"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/identity"
)

// ---------------------------------------------------------------------------
// The sample module: one operation per convention under test.
// ---------------------------------------------------------------------------

type sampleMeta struct {
	Key string `json:"key"`
}

type sampleAction struct {
	Action   string `json:"action" required:"true"`
	FilePath string `json:"file_path"`
	Content  string `json:"content"`
}

// sampleBody is both the input and the echoed output of create-sample.
type sampleBody struct {
	Title      string         `json:"title" required:"true"`
	Count      int            `json:"count"`
	Ratio      float64        `json:"ratio"`
	Enabled    bool           `json:"enabled"`
	Visibility string         `json:"visibility,omitempty" enum:"private,internal,public"`
	Tags       []string       `json:"tags"`
	Actions    []sampleAction `json:"actions"`
	Meta       sampleMeta     `json:"meta"`
}

type createSampleInput struct {
	Body sampleBody
}

type createSampleOutput struct {
	Body sampleBody
}

type sampleItem struct {
	ID   int64  `json:"id"`
	Path string `json:"path"`
}

type listSamplesInput struct {
	api.PageParams
	Scope []string `query:"scope"`
	Empty bool     `query:"empty"`
}

type listSamplesOutput struct {
	api.PageHeaders
	SampleScope string `header:"X-Sample-Scope"`
	Body        []sampleItem
}

type getSampleInput struct {
	ID string `path:"id"`
}

type getSampleOutput struct {
	Body sampleItem
}

type errorInput struct {
	Kind string `path:"kind"`
}

type timesOutput struct {
	Body struct {
		At  api.Time  `json:"at"`
		Nil *api.Time `json:"nil"`
		Day api.Date  `json:"day"`
	}
}

type whoamiBody struct {
	Username string `json:"username"`
	Sudoer   string `json:"sudoer"`
}

type whoamiOutput struct {
	Body whoamiBody
}

type whoamiPostInput struct {
	Body struct {
		Note string `json:"note"`
	}
}

// leakedSecret must never reach a client.
const leakedSecret = "db password hunter2 at /var/lib/fennec"

func sampleItems() []sampleItem {
	items := make([]sampleItem, 45)
	for i := range items {
		id := int64(i + 1)
		items[i] = sampleItem{ID: id, Path: "group/sub/p" + strconv.FormatInt(id, 10)}
	}
	items[6].Path = "group/sub/project" // id 7
	return items
}

func whoami(ctx context.Context) *whoamiOutput {
	out := &whoamiOutput{}
	p := auth.FromContext(ctx)
	if !p.IsAnonymous() {
		out.Body.Username = p.User.Username
	}
	if p != nil && p.Sudoer != nil {
		out.Body.Sudoer = p.Sudoer.Username
	}
	return out
}

func sampleModule() fennec.Module {
	return fennec.NewModule("sample", fennec.ProvideRoutes(func(fennec.None) fennec.Routes {
		return fennec.Routes{Name: "sample", Register: registerSample}
	}))
}

func registerSample(a *api.API) {
	items := sampleItems()

	api.Register(a, api.Op{
		ID: "create-sample", Method: http.MethodPost, Path: "/samples", Access: api.Public,
	}, func(ctx context.Context, in *createSampleInput) (*createSampleOutput, error) {
		return &createSampleOutput{Body: in.Body}, nil
	})

	api.Register(a, api.Op{
		ID: "create-small-sample", Method: http.MethodPost, Path: "/small-samples", Access: api.Public, MaxBodyBytes: 64,
	}, func(ctx context.Context, in *createSampleInput) (*createSampleOutput, error) {
		return &createSampleOutput{Body: in.Body}, nil
	})

	api.Register(a, api.Op{
		ID: "list-samples", Method: http.MethodGet, Path: "/samples", Access: api.Public,
	}, func(ctx context.Context, in *listSamplesInput) (*listSamplesOutput, error) {
		all := items
		if in.Empty {
			all = nil
		}
		out := &listSamplesOutput{Body: api.Window(all, in.PageParams)}
		out.PageHeaders = api.Paginate(ctx, in.PageParams, len(all))
		out.SampleScope = strings.Join(in.Scope, "|")
		return out, nil
	})

	api.Register(a, api.Op{
		ID: "get-sample", Method: http.MethodGet, Path: "/samples/{id}", Access: api.Public,
	}, func(ctx context.Context, in *getSampleInput) (*getSampleOutput, error) {
		id, path := api.ParseID(in.ID)
		for _, it := range items {
			if (id > 0 && it.ID == id) || (id == 0 && it.Path == path) {
				return &getSampleOutput{Body: it}, nil
			}
		}
		return nil, api.NotFound("Sample")
	})

	api.Register(a, api.Op{
		ID: "sample-error", Method: http.MethodGet, Path: "/sample-errors/{kind}", Access: api.Public,
	}, func(ctx context.Context, in *errorInput) (*getSampleOutput, error) {
		switch in.Kind {
		case "plain":
			return nil, errors.New(leakedSecret)
		case "panic":
			panic(leakedSecret)
		case "notfound":
			return nil, fmt.Errorf("loading sample: %w", store.ErrNotFound)
		case "notmodified":
			return nil, api.NotModified
		case "validation":
			return nil, api.Validation(map[string][]string{"title": {"can't be blank", "is too short"}})
		case "conflict":
			return nil, api.Conflict("Sample already exists")
		case "forbidden":
			return nil, api.Forbidden("reason")
		case "service":
			return nil, api.BadRequest("You must provide content.")
		case "atleastone":
			return nil, api.AtLeastOne("title", "description")
		case "methodnotallowed":
			return nil, api.MethodNotAllowed("")
		}
		return &getSampleOutput{Body: sampleItem{ID: 1}}, nil
	})

	api.Register(a, api.Op{
		ID: "sample-times", Method: http.MethodGet, Path: "/sample-times", Access: api.Public,
	}, func(ctx context.Context, _ *struct{}) (*timesOutput, error) {
		out := &timesOutput{}
		zone := time.FixedZone("CEST", 2*60*60)
		out.Body.At = api.NewTime(time.Date(2017, 5, 24, 12, 14, 38, 7_400_000, zone))
		out.Body.Nil = api.TimePtr(time.Time{})
		out.Body.Day = api.Date(time.Date(2017, 5, 24, 0, 0, 0, 0, time.UTC))
		return out, nil
	})

	access := []struct {
		id     string
		path   string
		access api.Access
		scopes []string
	}{
		{"sample-admin", "/sample-admin", api.AdminOnly, nil},
		{"sample-signed-in", "/sample-signed-in", api.SignedIn, nil},
		{"sample-read-user", "/sample-read-user", api.SignedIn, []string{"api", "read_user"}},
		{"sample-whoami", "/sample-whoami", api.Public, nil},
	}
	for _, op := range access {
		api.Register(a, api.Op{
			ID: op.id, Method: http.MethodGet, Path: op.path, Access: op.access, Scopes: op.scopes,
		}, func(ctx context.Context, _ *struct{}) (*whoamiOutput, error) {
			return whoami(ctx), nil
		})
	}
	api.Register(a, api.Op{
		ID: "sample-whoami-post", Method: http.MethodPost, Path: "/sample-whoami", Access: api.Public, Status: http.StatusOK,
	}, func(ctx context.Context, _ *whoamiPostInput) (*whoamiOutput, error) {
		return whoami(ctx), nil
	})
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

func start(t *testing.T, opts ...fennectest.Option) *fennectest.Server {
	t.Helper()
	return fennectest.Start(t, append([]fennectest.Option{fennectest.WithModules(identity.Module(), sampleModule())}, opts...)...)
}

// noRedirect never follows redirects, so a redirect is seen as itself.
var noRedirect = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// send makes a raw request (header pairs "Name", "value") and returns the
// response with its body read.
func send(t *testing.T, s *fennectest.Server, method, path string, body io.Reader, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, body)
	if err != nil {
		t.Fatalf("request %s %s: %v", method, path, err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp, raw
}

// trimNL drops the one newline a JSON encoder adds.
func trimNL(b []byte) string { return strings.TrimSuffix(string(b), "\n") }

// wantBody asserts the status and the exact body bytes (less a trailing
// newline).
func wantBody(t *testing.T, what string, resp *http.Response, raw []byte, status int, body string) {
	t.Helper()
	if resp.StatusCode != status || trimNL(raw) != body {
		t.Errorf("%s: got %d %s, want %d %s", what, resp.StatusCode, raw, status, body)
	}
}

// wantError asserts a GitLab error response: status, Content-Type
// application/json and the exact body.
func wantError(t *testing.T, what string, resp *http.Response, raw []byte, status int, body string) {
	t.Helper()
	wantBody(t, what, resp, raw, status, body)
	wantJSONType(t, what, resp)
}

func wantJSONType(t *testing.T, what string, resp *http.Response) {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json", what, ct)
	}
}

// sameJSON compares a JSON body with want (a Go value or a JSON string)
// after decoding both into generic values.
func sameJSON(t *testing.T, what string, raw []byte, want any) {
	t.Helper()
	var wantRaw []byte
	if s, ok := want.(string); ok {
		wantRaw = []byte(s)
	} else {
		var err error
		if wantRaw, err = json.Marshal(want); err != nil {
			t.Fatalf("%s: marshal want: %v", what, err)
		}
	}
	var got, exp any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Errorf("%s: body %q is not JSON: %v", what, raw, err)
		return
	}
	if err := json.Unmarshal(wantRaw, &exp); err != nil {
		t.Fatalf("%s: want is not JSON: %v", what, err)
	}
	if !reflect.DeepEqual(got, exp) {
		t.Errorf("%s:\n got  %s\n want %s", what, raw, wantRaw)
	}
}

// errorObject decodes a one-key GitLab error body.
func errorObject(t *testing.T, what string, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Errorf("%s: body %q is not a JSON object: %v", what, raw, err)
		return nil
	}
	return m
}

func form(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(pairs[i]) + "=" + url.QueryEscape(pairs[i+1]))
	}
	return b.String()
}

func multipartBody(t *testing.T, pairs ...string) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := mw.WriteField(pairs[i], pairs[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf, mw.FormDataContentType()
}

const (
	formType = "application/x-www-form-urlencoded"
	jsonType = "application/json"
)

// ---------------------------------------------------------------------------
// 1. Parameter styles
// ---------------------------------------------------------------------------

// fullPairs is the whole create-sample input as Rails-style form pairs, with
// unknown keys mixed in.
var fullPairs = []string{
	"title", "Hello",
	"count", "3",
	"ratio", "1.5",
	"enabled", "true",
	"visibility", "internal",
	"tags[]", "a",
	"tags[]", "b",
	"actions[][action]", "create",
	"actions[][file_path]", "a",
	"actions[][content]", "x",
	"actions[][action]", "delete",
	"actions[][file_path]", "b",
	"meta[key]", "v",
	"unknown", "1",
	"unknown_obj[x]", "y",
	"actions_unknown[][k]", "z",
}

var fullWant = sampleBody{
	Title: "Hello", Count: 3, Ratio: 1.5, Enabled: true, Visibility: "internal",
	Tags: []string{"a", "b"},
	Actions: []sampleAction{
		{Action: "create", FilePath: "a", Content: "x"},
		{Action: "delete", FilePath: "b"},
	},
	Meta: sampleMeta{Key: "v"},
}

const fullJSON = `{"title":"Hello","count":3,"ratio":1.5,"enabled":true,"visibility":"internal",
	"tags":["a","b"],
	"actions":[{"action":"create","file_path":"a","content":"x","extra":1},{"action":"delete","file_path":"b"}],
	"meta":{"key":"v","other":true},"unknown":{"deep":[1,2]}}`

func TestParameterStyles(t *testing.T) {
	t.Parallel()
	s := start(t)

	t.Run("query string only", func(t *testing.T) {
		// Everything but the tags[] array (see the next subtest).
		var pairs []string
		for i := 0; i+1 < len(fullPairs); i += 2 {
			if fullPairs[i] != "tags[]" {
				pairs = append(pairs, fullPairs[i], fullPairs[i+1])
			}
		}
		pairs = append(pairs, "tags", "a,b")
		resp, raw := send(t, s, http.MethodPost, "/api/v4/samples?"+form(pairs...), nil)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		sameJSON(t, "query", raw, fullWant)
	})

	t.Run("query string arrays", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodPost, "/api/v4/samples?"+form(fullPairs...), nil)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		sameJSON(t, "query", raw, fullWant)
		q := "title=Hello&count=3&ratio=1.5&enabled=true&visibility=internal&tags[]=a&tags[]=b" +
			"&actions[][action]=create&actions[][file_path]=a&actions[][content]=x" +
			"&actions[][action]=delete&actions[][file_path]=b&meta[key]=v&unknown=1"
		resp, raw = send(t, s, http.MethodPost, "/api/v4/samples?"+q, nil)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		sameJSON(t, "query, raw brackets", raw, fullWant)
	})

	t.Run("urlencoded form", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodPost, "/api/v4/samples", strings.NewReader(form(fullPairs...)), "Content-Type", formType)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		sameJSON(t, "form", raw, fullWant)
		wantJSONType(t, "form", resp)
	})

	t.Run("multipart form", func(t *testing.T) {
		body, ct := multipartBody(t, fullPairs...)
		resp, raw := send(t, s, http.MethodPost, "/api/v4/samples", body, "Content-Type", ct)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		sameJSON(t, "multipart", raw, fullWant)
	})

	t.Run("json", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodPost, "/api/v4/samples", strings.NewReader(fullJSON), "Content-Type", jsonType)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		sameJSON(t, "json", raw, fullWant)
	})

	t.Run("json with charset", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodPost, "/api/v4/samples", strings.NewReader(fullJSON), "Content-Type", "application/json; charset=utf-8")
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		sameJSON(t, "json charset", raw, fullWant)
	})

	t.Run("json with string scalars", func(t *testing.T) {
		body := `{"title":"Hello","count":"3","ratio":"1.5","enabled":"1"}`
		resp, raw := send(t, s, http.MethodPost, "/api/v4/samples", strings.NewReader(body), "Content-Type", jsonType)
		sameJSON(t, "json strings", raw, sampleBody{Title: "Hello", Count: 3, Ratio: 1.5, Enabled: true})
		if resp.StatusCode != http.StatusCreated {
			t.Errorf("status %d", resp.StatusCode)
		}
	})

	t.Run("body wins over query", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodPost, "/api/v4/samples?title=FromQuery&count=7",
			strings.NewReader("title=FromBody"), "Content-Type", formType)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		sameJSON(t, "form over query", raw, sampleBody{Title: "FromBody", Count: 7})

		resp, raw = send(t, s, http.MethodPost, "/api/v4/samples?title=FromQuery&enabled=false",
			strings.NewReader(`{"title":"FromJSON","enabled":true}`), "Content-Type", jsonType)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		sameJSON(t, "json over query", raw, sampleBody{Title: "FromJSON", Enabled: true})
	})

	t.Run("booleans", func(t *testing.T) {
		for _, c := range []struct {
			in   string
			want bool
		}{{"true", true}, {"false", false}, {"1", true}, {"0", false}} {
			for _, where := range []string{"form", "query"} {
				var resp *http.Response
				var raw []byte
				if where == "form" {
					resp, raw = send(t, s, http.MethodPost, "/api/v4/samples", strings.NewReader(form("title", "t", "enabled", c.in)), "Content-Type", formType)
				} else {
					resp, raw = send(t, s, http.MethodPost, "/api/v4/samples?"+form("title", "t", "enabled", c.in), nil)
				}
				if resp.StatusCode != http.StatusCreated {
					t.Errorf("enabled=%s (%s): got %d %s", c.in, where, resp.StatusCode, raw)
					continue
				}
				sameJSON(t, "enabled="+c.in+" ("+where+")", raw, sampleBody{Title: "t", Enabled: c.want})
			}
		}
	})

	t.Run("numbers from strings", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodPost, "/api/v4/samples", strings.NewReader("title=t&count=-42&ratio=0.25"), "Content-Type", formType)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		sameJSON(t, "numbers", raw, sampleBody{Title: "t", Count: -42, Ratio: 0.25})
	})

	t.Run("arrays", func(t *testing.T) {
		want := sampleBody{Title: "t", Tags: []string{"a", "b"}}
		for name, body := range map[string]string{
			"tags[]":       "title=t&tags[]=a&tags[]=b",
			"tags%5B%5D":   "title=t&tags%5B%5D=a&tags%5B%5D=b",
			"comma joined": "title=t&tags=a,b",
		} {
			resp, raw := send(t, s, http.MethodPost, "/api/v4/samples", strings.NewReader(body), "Content-Type", formType)
			if resp.StatusCode != http.StatusCreated {
				t.Errorf("%s: got %d %s", name, resp.StatusCode, raw)
				continue
			}
			sameJSON(t, name, raw, want)
		}
		resp, raw := send(t, s, http.MethodPost, "/api/v4/samples", strings.NewReader(`{"title":"t","tags":["a","b"]}`), "Content-Type", jsonType)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("json: got %d %s", resp.StatusCode, raw)
		}
		sameJSON(t, "json array", raw, want)
	})

	t.Run("rails arrays of objects", func(t *testing.T) {
		body := "title=t&actions[][action]=create&actions[][file_path]=a&actions[][action]=delete&actions[][file_path]=b"
		resp, raw := send(t, s, http.MethodPost, "/api/v4/samples", strings.NewReader(body), "Content-Type", formType)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		sameJSON(t, "actions", raw, sampleBody{Title: "t", Actions: []sampleAction{
			{Action: "create", FilePath: "a"}, {Action: "delete", FilePath: "b"},
		}})
	})

	t.Run("rails object", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodPost, "/api/v4/samples", strings.NewReader("title=t&meta[key]=v"), "Content-Type", formType)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		sameJSON(t, "meta", raw, sampleBody{Title: "t", Meta: sampleMeta{Key: "v"}})
	})

	t.Run("unknown keys ignored", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodPost, "/api/v4/samples?also_unknown=1",
			strings.NewReader("title=t&nope=1&nope2[a]=b&nope3[]=c"), "Content-Type", formType)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("form: got %d %s", resp.StatusCode, raw)
		}
		sameJSON(t, "form unknown", raw, sampleBody{Title: "t"})

		resp, raw = send(t, s, http.MethodPost, "/api/v4/samples",
			strings.NewReader(`{"title":"t","nope":1,"nope2":{"a":[1]},"meta":{"key":"k","nope":null}}`), "Content-Type", jsonType)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("json: got %d %s", resp.StatusCode, raw)
		}
		sameJSON(t, "json unknown", raw, sampleBody{Title: "t", Meta: sampleMeta{Key: "k"}})
	})
}

// ---------------------------------------------------------------------------
// 2. Errors
// ---------------------------------------------------------------------------

func TestErrors(t *testing.T) {
	t.Parallel()
	s := start(t)
	post := func(t *testing.T, body, ct string) (*http.Response, []byte) {
		t.Helper()
		return send(t, s, http.MethodPost, "/api/v4/samples", strings.NewReader(body), "Content-Type", ct)
	}

	t.Run("missing required", func(t *testing.T) {
		resp, raw := post(t, "count=1", formType)
		wantError(t, "form", resp, raw, 400, `{"error":"title is missing"}`)
		resp, raw = post(t, `{"count":1}`, jsonType)
		wantError(t, "json", resp, raw, 400, `{"error":"title is missing"}`)
		resp, raw = send(t, s, http.MethodPost, "/api/v4/samples", nil)
		wantError(t, "no body", resp, raw, 400, `{"error":"title is missing"}`)
	})

	t.Run("missing and invalid together", func(t *testing.T) {
		resp, raw := post(t, "visibility=secret", formType)
		if resp.StatusCode != 400 {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		wantJSONType(t, "combined", resp)
		m := errorObject(t, "combined", raw)
		msg, _ := m["error"].(string)
		if len(m) != 1 || !strings.Contains(msg, "title is missing") || !strings.Contains(msg, "visibility does not have a valid value") || !strings.Contains(msg, ", ") {
			t.Errorf("combined: got %s", raw)
		}
		if msg != "title is missing, visibility does not have a valid value" {
			t.Errorf("combined: got %q, want %q", msg, "title is missing, visibility does not have a valid value")
		}
	})

	t.Run("invalid value", func(t *testing.T) {
		resp, raw := post(t, "title=t&visibility=secret", formType)
		wantError(t, "enum", resp, raw, 400, `{"error":"visibility does not have a valid value"}`)
		resp, raw = post(t, "title=t&count=abc", formType)
		wantError(t, "count", resp, raw, 400, `{"error":"count is invalid"}`)
		resp, raw = post(t, `{"title":"t","count":"abc"}`, jsonType)
		wantError(t, "count json", resp, raw, 400, `{"error":"count is invalid"}`)
		resp, raw = post(t, "title=t&enabled=maybe", formType)
		wantError(t, "enabled", resp, raw, 400, `{"error":"enabled is invalid"}`)
	})

	t.Run("missing nested required", func(t *testing.T) {
		resp, raw := post(t, "title=t&actions[][file_path]=a", formType)
		if resp.StatusCode != 400 {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		wantJSONType(t, "nested", resp)
		m := errorObject(t, "nested", raw)
		msg, _ := m["error"].(string)
		if len(m) != 1 || !strings.Contains(msg, "actions[action] is missing") {
			t.Errorf("nested: got %s, want an error mentioning actions[action] is missing", raw)
		}
	})

	badBodies := []struct{ body, ct string }{
		{`{"title":`, jsonType},
		{`{"title":"t"} trailing`, jsonType},
		{`not json at all {`, jsonType},
		{`[{"title":"t"}]`, jsonType},
		{`"just a string"`, jsonType},
		{`--x`, "multipart/form-data"},
	}

	t.Run("malformed bodies are 400", func(t *testing.T) {
		for _, c := range badBodies {
			resp, raw := post(t, c.body, c.ct)
			if resp.StatusCode != 400 {
				t.Errorf("%q: got %d %s", c.body, resp.StatusCode, raw)
				continue
			}
			wantJSONType(t, c.body, resp)
			m := errorObject(t, c.body, raw)
			if len(m) != 1 {
				t.Errorf("%q: got %s, want a one-key GitLab error", c.body, raw)
			}
			for _, v := range m {
				if _, ok := v.(string); !ok {
					t.Errorf("%q: got %s, want a string message", c.body, raw)
				}
			}
		}
	})

	t.Run("malformed bodies say message", func(t *testing.T) {
		for _, c := range badBodies {
			resp, raw := post(t, c.body, c.ct)
			if resp.StatusCode != 400 {
				t.Errorf("%q: got %d %s", c.body, resp.StatusCode, raw)
				continue
			}
			m := errorObject(t, c.body, raw)
			if _, ok := m["message"].(string); !ok || len(m) != 1 {
				t.Errorf("%q: got %s, want {\"message\":...} only", c.body, raw)
			}
		}
	})

	t.Run("operation body limit", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodPost, "/api/v4/small-samples", strings.NewReader(`{"title":"`+strings.Repeat("x", 100)+`"}`), "Content-Type", jsonType)
		wantError(t, "100 bytes over a 64-byte limit", resp, raw, 413, `{"message":"413 Request Entity Too Large"}`)
		resp, raw = send(t, s, http.MethodPost, "/api/v4/small-samples", strings.NewReader(`{"title":"x"}`), "Content-Type", jsonType)
		wantBody(t, "small body", resp, raw, 201, `{"title":"x","count":0,"ratio":0,"enabled":false,"tags":null,"actions":null,"meta":{"key":""}}`)
	})

	t.Run("unsupported media type", func(t *testing.T) {
		resp, raw := post(t, "title=t", "text/plain")
		wantError(t, "text/plain", resp, raw, 415, `{"message":"415 Unsupported Media Type"}`)
	})

	t.Run("unknown route", func(t *testing.T) {
		for _, path := range []string{"/api/v4/nothing-here", "/api/v4/samples/7/nothing"} {
			resp, raw := send(t, s, http.MethodGet, path, nil)
			wantError(t, path, resp, raw, 404, `{"error":"404 Not Found"}`)
		}
		// Outside the API, what no route takes is the web interface's
		// (core/web): its HTML 404 page, as GitLab answers a browser.
		resp, raw := send(t, s, http.MethodGet, "/nothing-here", nil)
		if resp.StatusCode != 404 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || !strings.Contains(string(raw), "<h1>Page not found</h1>") {
			t.Errorf("/nothing-here: %d %s %.200s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
		}
	})

	t.Run("wrong method", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodDelete, "/api/v4/samples", nil)
		wantError(t, "DELETE /samples", resp, raw, 405, `{"error":"405 Not Allowed"}`)
		allow := strings.Split(resp.Header.Get("Allow"), ",")
		for i := range allow {
			allow[i] = strings.TrimSpace(allow[i])
		}
		if !slices.Contains(allow, "GET") || !slices.Contains(allow, "POST") || slices.Contains(allow, "DELETE") {
			t.Errorf("Allow %q, want GET and POST", resp.Header.Get("Allow"))
		}
		resp, raw = send(t, s, http.MethodPut, "/api/v4/samples/7", nil)
		wantError(t, "PUT /samples/7", resp, raw, 405, `{"error":"405 Not Allowed"}`)
		if got := resp.Header.Get("Allow"); got != "GET" {
			t.Errorf("Allow %q, want GET", got)
		}
	})

	t.Run("handler errors", func(t *testing.T) {
		for _, c := range []struct {
			kind   string
			status int
			body   string
		}{
			{"plain", 500, `{"message":"500 Internal Server Error"}`},
			{"panic", 500, `{"message":"500 Internal Server Error"}`},
			{"notfound", 404, `{"message":"404 Not Found"}`},
			{"validation", 400, `{"message":{"title":["can't be blank","is too short"]}}`},
			{"conflict", 409, `{"message":"Sample already exists"}`},
			{"forbidden", 403, `{"message":"403 Forbidden - reason"}`},
			{"service", 400, `{"message":"You must provide content."}`},
			{"atleastone", 400, `{"error":"title, description are missing, at least one parameter must be provided"}`},
			{"methodnotallowed", 405, `{"message":"405 Method Not Allowed"}`},
		} {
			resp, raw := send(t, s, http.MethodGet, "/api/v4/sample-errors/"+c.kind, nil)
			wantError(t, c.kind, resp, raw, c.status, c.body)
			if bytes.Contains(raw, []byte("hunter2")) {
				t.Errorf("%s: secret leaked: %s", c.kind, raw)
			}
		}
		// The panic did not take the server down.
		resp, raw := send(t, s, http.MethodGet, "/-/liveness", nil)
		wantBody(t, "liveness after panic", resp, raw, 200, `{"status":"ok"}`)
	})

	t.Run("not modified", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodGet, "/api/v4/sample-errors/notmodified", nil)
		if resp.StatusCode != 304 || len(raw) != 0 {
			t.Errorf("got %d %q, want 304 with no body", resp.StatusCode, raw)
		}
	})

	t.Run("authentication and access", func(t *testing.T) {
		user := s.CreateUser(t, "")
		readUser := s.CreateUser(t, "", fennectest.Scopes("read_user"))

		resp, raw := send(t, s, http.MethodGet, "/api/v4/sample-signed-in", nil)
		wantError(t, "anonymous on SignedIn", resp, raw, 401, `{"message":"401 Unauthorized"}`)
		resp, raw = send(t, s, http.MethodGet, "/api/v4/sample-admin", nil)
		wantError(t, "anonymous on AdminOnly", resp, raw, 401, `{"message":"401 Unauthorized"}`)

		resp, raw = send(t, s, http.MethodGet, "/api/v4/samples/7", nil, "PRIVATE-TOKEN", "not-a-token")
		wantError(t, "bad token on Public", resp, raw, 401, `{"message":"401 Unauthorized"}`)
		resp, raw = send(t, s, http.MethodGet, "/api/v4/samples/7?private_token=not-a-token", nil)
		wantError(t, "bad private_token on Public", resp, raw, 401, `{"message":"401 Unauthorized"}`)
		resp, raw = send(t, s, http.MethodPost, "/api/v4/samples", strings.NewReader("title=t&private_token=not-a-token"), "Content-Type", formType)
		wantError(t, "bad form private_token on Public", resp, raw, 401, `{"message":"401 Unauthorized"}`)

		resp, raw = send(t, s, http.MethodGet, "/api/v4/sample-admin", nil, "PRIVATE-TOKEN", user.Token)
		wantError(t, "user on AdminOnly", resp, raw, 403, `{"message":"403 Forbidden"}`)
		resp, raw = send(t, s, http.MethodGet, "/api/v4/sample-admin", nil, "PRIVATE-TOKEN", s.RootToken)
		wantBody(t, "root on AdminOnly", resp, raw, 200, `{"username":"root","sudoer":""}`)

		resp, raw = send(t, s, http.MethodGet, "/api/v4/sample-signed-in", nil, "PRIVATE-TOKEN", readUser.Token)
		wantError(t, "read_user on api op", resp, raw, 403, `{"message":"403 Forbidden - insufficient scope"}`)
		resp, raw = send(t, s, http.MethodGet, "/api/v4/sample-read-user", nil, "PRIVATE-TOKEN", readUser.Token)
		wantBody(t, "read_user on read_user op", resp, raw, 200, `{"username":"`+readUser.Username+`","sudoer":""}`)
		resp, raw = send(t, s, http.MethodGet, "/api/v4/sample-signed-in", nil, "PRIVATE-TOKEN", user.Token)
		wantBody(t, "api on api op", resp, raw, 200, `{"username":"`+user.Username+`","sudoer":""}`)
	})
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	s := start(t, fennectest.WithConfig(func(c *config.Config) { c.MaxBodyBytes = 1024 }))
	big := `{"title":"` + strings.Repeat("x", 4096) + `"}`
	resp, raw := send(t, s, http.MethodPost, "/api/v4/samples", strings.NewReader(big), "Content-Type", jsonType)
	wantError(t, "4 KiB json", resp, raw, 413, `{"message":"413 Request Entity Too Large"}`)
	resp, raw = send(t, s, http.MethodPost, "/api/v4/samples", strings.NewReader("title="+strings.Repeat("x", 4096)), "Content-Type", formType)
	wantError(t, "4 KiB form", resp, raw, 413, `{"message":"413 Request Entity Too Large"}`)
	// Below the limit still works.
	resp, raw = send(t, s, http.MethodPost, "/api/v4/samples", strings.NewReader(`{"title":"small"}`), "Content-Type", jsonType)
	if resp.StatusCode != 201 {
		t.Errorf("small body: got %d %s", resp.StatusCode, raw)
	}
}

// ---------------------------------------------------------------------------
// 3. Auth inputs
// ---------------------------------------------------------------------------

func TestAuthInputs(t *testing.T) {
	t.Parallel()
	s := start(t)
	alice := s.CreateUser(t, "alice")
	bob := s.CreateUser(t, "bob")
	aliceBody := `{"username":"alice","sudoer":""}`

	t.Run("private token header", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodGet, "/api/v4/sample-whoami", nil, "PRIVATE-TOKEN", alice.Token)
		wantBody(t, "header", resp, raw, 200, aliceBody)
	})
	t.Run("private_token query", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodGet, "/api/v4/sample-whoami?private_token="+url.QueryEscape(alice.Token), nil)
		wantBody(t, "query", resp, raw, 200, aliceBody)
	})
	t.Run("private_token form body", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodPost, "/api/v4/sample-whoami",
			strings.NewReader(form("private_token", alice.Token, "note", "n")), "Content-Type", formType)
		wantBody(t, "form", resp, raw, 200, aliceBody)
		resp, raw = send(t, s, http.MethodPost, "/api/v4/sample-whoami",
			strings.NewReader(`{"private_token":"`+alice.Token+`"}`), "Content-Type", jsonType)
		wantBody(t, "json", resp, raw, 200, aliceBody)
	})
	t.Run("anonymous", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodGet, "/api/v4/sample-whoami", nil)
		wantBody(t, "anonymous", resp, raw, 200, `{"username":"","sudoer":""}`)
	})
	t.Run("bearer with a private token", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodGet, "/api/v4/sample-whoami", nil, "Authorization", "Bearer "+alice.Token)
		wantError(t, "bearer", resp, raw, 401, `{"message":"401 Unauthorized"}`)
		resp, raw = send(t, s, http.MethodGet, "/api/v4/sample-whoami?access_token="+url.QueryEscape(alice.Token), nil)
		wantError(t, "access_token", resp, raw, 401, `{"message":"401 Unauthorized"}`)
	})

	t.Run("sudo parameter", func(t *testing.T) {
		var u map[string]any
		resp, raw := send(t, s, http.MethodGet, "/api/v4/user?sudo=alice", nil, "PRIVATE-TOKEN", s.RootToken)
		if resp.StatusCode != 200 {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		if err := json.Unmarshal(raw, &u); err != nil {
			t.Fatal(err)
		}
		if u["username"] != "alice" || u["id"] != float64(alice.ID) {
			t.Errorf("sudo=alice acts as %v (%v), want alice", u["username"], u["id"])
		}
		// The spec's sudo view carries the target's one private token
		// (issue 35), the same on every read (issue 10).
		if tok, _ := u["private_token"].(string); len(tok) != 20 {
			t.Errorf("sudo: no private_token in %s", raw)
		} else if _, again := send(t, s, http.MethodGet, "/api/v4/user?sudo=alice", nil, "PRIVATE-TOKEN", s.RootToken); !strings.Contains(string(again), `"private_token":"`+tok+`"`) {
			t.Errorf("sudo: a second read shows another private token: %s", again)
		}
		resp, raw = send(t, s, http.MethodGet, "/api/v4/sample-whoami?sudo=alice", nil, "PRIVATE-TOKEN", s.RootToken)
		wantBody(t, "sample sudo", resp, raw, 200, `{"username":"alice","sudoer":"root"}`)
	})
	t.Run("sudo header", func(t *testing.T) {
		var u map[string]any
		resp, raw := send(t, s, http.MethodGet, "/api/v4/user", nil, "PRIVATE-TOKEN", s.RootToken, "SUDO", strconv.FormatInt(bob.ID, 10))
		if resp.StatusCode != 200 {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		if err := json.Unmarshal(raw, &u); err != nil {
			t.Fatal(err)
		}
		if u["username"] != "bob" {
			t.Errorf("SUDO: %d acts as %v, want bob", bob.ID, u["username"])
		}
		if tok, _ := u["private_token"].(string); len(tok) != 20 { // the spec's sudo view (issue 35)
			t.Errorf("SUDO: no private_token in %s", raw)
		}
	})
	t.Run("sudo in form body", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodPost, "/api/v4/sample-whoami", strings.NewReader("sudo=bob"),
			"Content-Type", formType, "PRIVATE-TOKEN", s.RootToken)
		wantBody(t, "form sudo", resp, raw, 200, `{"username":"bob","sudoer":"root"}`)
	})
	t.Run("sudo by non-admin", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodGet, "/api/v4/user?sudo=bob", nil, "PRIVATE-TOKEN", alice.Token)
		wantError(t, "non-admin sudo", resp, raw, 403, `{"message":"403 Forbidden - Must be admin to use sudo"}`)
	})
	t.Run("sudo unknown user", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodGet, "/api/v4/user?sudo=nosuchuser", nil, "PRIVATE-TOKEN", s.RootToken)
		wantError(t, "unknown sudo", resp, raw, 404, `{"message":"404 No user id or username for: nosuchuser Not Found"}`)
	})
}

// ---------------------------------------------------------------------------
// 4. Pagination
// ---------------------------------------------------------------------------

type pageWant struct {
	total, pages, per, page string
	next, prev              string
	ids                     []int64
}

func listIDs(t *testing.T, what string, raw []byte) []int64 {
	t.Helper()
	var items []sampleItem
	if err := json.Unmarshal(raw, &items); err != nil {
		t.Fatalf("%s: body %q: %v", what, raw, err)
	}
	ids := []int64{}
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	return ids
}

func idRange(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func checkPage(t *testing.T, s *fennectest.Server, query string, w pageWant) *http.Response {
	t.Helper()
	path := "/api/v4/samples"
	if query != "" {
		path += "?" + query
	}
	resp, raw := send(t, s, http.MethodGet, path, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: got %d %s", path, resp.StatusCode, raw)
	}
	for _, h := range []struct{ name, want string }{
		{"X-Total", w.total}, {"X-Total-Pages", w.pages}, {"X-Per-Page", w.per},
		{"X-Page", w.page}, {"X-Next-Page", w.next}, {"X-Prev-Page", w.prev},
	} {
		vs, ok := resp.Header[h.name]
		if !ok {
			t.Errorf("%s: header %s missing, want %q", path, h.name, h.want)
			continue
		}
		if len(vs) != 1 || vs[0] != h.want {
			t.Errorf("%s: header %s = %q, want %q", path, h.name, vs, h.want)
		}
	}
	if got := listIDs(t, path, raw); !slices.Equal(got, w.ids) {
		t.Errorf("%s: ids %v, want %v", path, got, w.ids)
	}
	return resp
}

// parseLinks maps rel -> URL from a Link header.
func parseLinks(t *testing.T, header string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, part := range strings.Split(header, ", ") {
		u, rel, ok := strings.Cut(part, ">; rel=\"")
		if !ok || !strings.HasPrefix(u, "<") || !strings.HasSuffix(rel, "\"") {
			t.Errorf("malformed Link part %q in %q", part, header)
			continue
		}
		out[strings.TrimSuffix(rel, "\"")] = strings.TrimPrefix(u, "<")
	}
	return out
}

func TestPagination(t *testing.T) {
	t.Parallel()
	s := start(t)

	t.Run("default page", func(t *testing.T) {
		resp := checkPage(t, s, "", pageWant{"45", "3", "20", "1", "2", "", idRange(1, 20)})
		if n := len(resp.Header.Values("Link")); n != 1 {
			t.Fatalf("%d Link headers, want 1", n)
		}
		links := parseLinks(t, resp.Header.Get("Link"))
		want := map[string]string{
			"next":  s.URL + "/api/v4/samples?page=2&per_page=20",
			"first": s.URL + "/api/v4/samples?page=1&per_page=20",
			"last":  s.URL + "/api/v4/samples?page=3&per_page=20",
		}
		if !reflect.DeepEqual(links, want) {
			t.Errorf("Link %q\n got  %v\n want %v", resp.Header.Get("Link"), links, want)
		}
	})

	t.Run("links keep parameters and drop secrets", func(t *testing.T) {
		path := "/api/v4/samples?scope[]=a&scope[]=b&page=2&per_page=10&private_token=" + url.QueryEscape(s.RootToken)
		resp, raw := send(t, s, http.MethodGet, path, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		link := resp.Header.Get("Link")
		if strings.Contains(link, "private_token") || strings.Contains(link, s.RootToken) {
			t.Errorf("Link leaks the token: %q", link)
		}
		links := parseLinks(t, link)
		for _, rel := range []string{"prev", "next", "first", "last"} {
			u, ok := links[rel]
			if !ok {
				t.Errorf("no rel=%q in %q", rel, link)
				continue
			}
			if !strings.HasPrefix(u, s.URL+"/api/v4/samples?") {
				t.Errorf("rel=%s %q is not absolute under %s", rel, u, s.URL)
				continue
			}
			pu, err := url.Parse(u)
			if err != nil {
				t.Errorf("rel=%s %q: %v", rel, u, err)
				continue
			}
			q := pu.Query()
			scope := append(q["scope"], q["scope[]"]...)
			if !slices.Equal(scope, []string{"a", "b"}) {
				t.Errorf("rel=%s %q lost scope a,b: %v", rel, u, scope)
			}
			if q.Get("per_page") != "10" {
				t.Errorf("rel=%s %q per_page %q, want 10", rel, u, q.Get("per_page"))
			}
		}
		for rel, page := range map[string]string{"prev": "1", "next": "3", "first": "1", "last": "5"} {
			if pu, err := url.Parse(links[rel]); err == nil && pu.Query().Get("page") != page {
				t.Errorf("rel=%s page %q, want %s", rel, pu.Query().Get("page"), page)
			}
		}
	})

	t.Run("last page", func(t *testing.T) {
		resp := checkPage(t, s, "page=3", pageWant{"45", "3", "20", "3", "", "2", idRange(41, 45)})
		links := parseLinks(t, resp.Header.Get("Link"))
		if _, ok := links["next"]; ok {
			t.Errorf("last page has rel=next: %q", resp.Header.Get("Link"))
		}
		if links["prev"] != s.URL+"/api/v4/samples?page=2&per_page=20" {
			t.Errorf("rel=prev %q", links["prev"])
		}
	})

	t.Run("past the end", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodGet, "/api/v4/samples?page=9", nil)
		wantBody(t, "page 9", resp, raw, 200, `[]`)
		if got := resp.Header.Get("X-Page"); got != "9" {
			t.Errorf("X-Page %q, want 9", got)
		}
		if got := resp.Header.Get("X-Total"); got != "45" {
			t.Errorf("X-Total %q, want 45", got)
		}
	})

	t.Run("per_page clamped", func(t *testing.T) {
		checkPage(t, s, "per_page=1000", pageWant{"45", "1", "100", "1", "", "", idRange(1, 45)})
	})
	t.Run("per_page below one", func(t *testing.T) {
		checkPage(t, s, "per_page=-1", pageWant{"45", "3", "20", "1", "2", "", idRange(1, 20)})
		checkPage(t, s, "per_page=0", pageWant{"45", "3", "20", "1", "2", "", idRange(1, 20)})
	})
	t.Run("page below one", func(t *testing.T) {
		checkPage(t, s, "page=0", pageWant{"45", "3", "20", "1", "2", "", idRange(1, 20)})
		checkPage(t, s, "page=-3", pageWant{"45", "3", "20", "1", "2", "", idRange(1, 20)})
	})
	t.Run("small pages", func(t *testing.T) {
		checkPage(t, s, "page=2&per_page=7", pageWant{"45", "7", "7", "2", "3", "1", idRange(8, 14)})
	})
	t.Run("unknown and boolean query parameters", func(t *testing.T) {
		checkPage(t, s, "unknown=1&nope[x]=y&empty=1", pageWant{"0", "1", "20", "1", "", "", []int64{}})
		checkPage(t, s, "empty=false&unknown[]=z", pageWant{"45", "3", "20", "1", "2", "", idRange(1, 20)})
		resp, raw := send(t, s, http.MethodGet, "/api/v4/samples?empty=maybe", nil)
		wantError(t, "empty=maybe", resp, raw, 400, `{"error":"empty is invalid"}`)
	})

	t.Run("per_page invalid", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodGet, "/api/v4/samples?per_page=abc", nil)
		wantError(t, "per_page=abc", resp, raw, 400, `{"error":"per_page is invalid"}`)
		resp, raw = send(t, s, http.MethodGet, "/api/v4/samples?page=x", nil)
		wantError(t, "page=x", resp, raw, 400, `{"error":"page is invalid"}`)
	})
	t.Run("empty list", func(t *testing.T) {
		resp := checkPage(t, s, "empty=true", pageWant{"0", "1", "20", "1", "", "", []int64{}})
		links := parseLinks(t, resp.Header.Get("Link"))
		if len(links) != 2 {
			t.Fatalf("empty list Link %v, want only first and last", links)
		}
		// Parameter order is not meaningful; compare path and values.
		want := url.Values{"empty": {"true"}, "page": {"1"}, "per_page": {"20"}}
		for _, rel := range []string{"first", "last"} {
			u, err := url.Parse(links[rel])
			if err != nil || s.URL+u.Path != s.URL+"/api/v4/samples" || !strings.HasPrefix(links[rel], s.URL+"/") || !reflect.DeepEqual(u.Query(), want) {
				t.Errorf("rel=%s %q, want %s/api/v4/samples with %v", rel, links[rel], s.URL, want)
			}
		}
	})

	t.Run("comma-separated query array", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodGet, "/api/v4/samples?scope=a,b", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		if got := resp.Header.Get("X-Sample-Scope"); got != "a|b" {
			t.Errorf("scope=a,b parsed as %q, want a|b", got)
		}
	})

	t.Run("array query parameters", func(t *testing.T) {
		for _, q := range []string{"scope[]=a&scope[]=b", "scope%5B%5D=a&scope%5B%5D=b"} {
			resp, raw := send(t, s, http.MethodGet, "/api/v4/samples?"+q, nil)
			if resp.StatusCode != 200 {
				t.Errorf("%s: got %d %s", q, resp.StatusCode, raw)
				continue
			}
			if got := resp.Header.Get("X-Sample-Scope"); got != "a|b" {
				t.Errorf("%s: scope parsed as %q, want a|b", q, got)
			}
		}
	})

	t.Run("following links keeps array parameters", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodGet, "/api/v4/samples?scope[]=a&scope[]=b&per_page=10", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		next := parseLinks(t, resp.Header.Get("Link"))["next"]
		if !strings.HasPrefix(next, s.URL) {
			t.Fatalf("rel=next %q", next)
		}
		resp, raw = send(t, s, http.MethodGet, strings.TrimPrefix(next, s.URL), nil)
		if resp.StatusCode != 200 {
			t.Fatalf("next: got %d %s", resp.StatusCode, raw)
		}
		if got := resp.Header.Get("X-Sample-Scope"); got != "a|b" {
			t.Errorf("rel=next %q: scope parsed as %q, want a|b", next, got)
		}
		if got := resp.Header.Get("X-Page"); got != "2" {
			t.Errorf("rel=next X-Page %q, want 2", got)
		}
	})
}

// ---------------------------------------------------------------------------
// 5. Ids
// ---------------------------------------------------------------------------

func TestIDs(t *testing.T) {
	t.Parallel()
	s := start(t)
	want := `{"id":7,"path":"group/sub/project"}`

	t.Run("number and path", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodGet, "/api/v4/samples/7", nil)
		wantBody(t, "by id", resp, raw, 200, want)
		resp, raw = send(t, s, http.MethodGet, "/api/v4/samples/group%2Fsub%2Fproject", nil)
		wantBody(t, "by path", resp, raw, 200, want)
		resp, raw = send(t, s, http.MethodGet, "/api/v4/samples/group%2fsub%2fproject", nil)
		wantBody(t, "by path, lower-case escapes", resp, raw, 200, want)
	})

	t.Run("unknown", func(t *testing.T) {
		for _, id := range []string{"999", "0", "-7", "+7", "group%2Fnope", "group"} {
			resp, raw := send(t, s, http.MethodGet, "/api/v4/samples/"+id, nil)
			wantError(t, id, resp, raw, 404, `{"message":"404 Sample Not Found"}`)
		}
	})

	t.Run("invalid utf-8", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodGet, "/api/v4/samples/%FF%FE", nil)
		if resp.StatusCode != 404 {
			t.Fatalf("got %d %s, want 404", resp.StatusCode, raw)
		}
		wantJSONType(t, "%FF%FE", resp)
		if b := trimNL(raw); b != `{"message":"404 Sample Not Found"}` && b != `{"error":"404 Not Found"}` {
			t.Errorf("body %s, want a GitLab 404", raw)
		}
	})

	t.Run("path traversal", func(t *testing.T) {
		for _, id := range []string{"..%2F..%2Fetc%2Fpasswd", "..%2F..%2F..%2F..%2Fapi%2Fv4%2Fversion", "%2E%2E%2F%2E%2E%2Fetc%2Fpasswd"} {
			resp, raw := send(t, s, http.MethodGet, "/api/v4/samples/"+id, nil)
			wantError(t, id, resp, raw, 404, `{"message":"404 Sample Not Found"}`)
			if loc := resp.Header.Get("Location"); loc != "" {
				t.Errorf("%s: redirected to %q", id, loc)
			}
		}
	})
}

// ---------------------------------------------------------------------------
// 6. Timestamps
// ---------------------------------------------------------------------------

func TestTimestamps(t *testing.T) {
	t.Parallel()
	s := start(t)
	resp, raw := send(t, s, http.MethodGet, "/api/v4/sample-times", nil)
	wantBody(t, "times", resp, raw, 200, `{"at":"2017-05-24T10:14:38.007Z","nil":null,"day":"2017-05-24"}`)
	wantJSONType(t, "times", resp)

	// Input side: any ISO 8601 form parses to the same instant.
	for _, in := range []string{"2017-05-24T10:14:38.007Z", "2017-05-24T12:14:38.007+02:00", "2017-05-24T12:14:38.007+0200"} {
		got, err := api.ParseTime(in)
		if err != nil || !got.Equal(time.Date(2017, 5, 24, 10, 14, 38, 7_000_000, time.UTC)) {
			t.Errorf("ParseTime(%q) = %v, %v", in, got, err)
		}
	}
	b, _ := json.Marshal(api.NewTime(time.Date(2017, 5, 24, 10, 14, 38, 0, time.UTC)))
	if string(b) != `"2017-05-24T10:14:38.000Z"` {
		t.Errorf("whole seconds render %s, want .000Z", b)
	}
}

// ---------------------------------------------------------------------------
// 7. Robustness
// ---------------------------------------------------------------------------

// readUntilClosed reads from c until it is closed or limit passes; it returns
// what was read and whether the read ended by timing out (a hang).
func readUntilClosed(t *testing.T, c net.Conn, limit time.Duration) ([]byte, bool) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(limit))
	data, err := io.ReadAll(c)
	var ne net.Error
	return data, errors.As(err, &ne) && ne.Timeout()
}

func TestRobustness(t *testing.T) {
	t.Parallel()
	s := start(t, fennectest.WithConfig(func(c *config.Config) { c.ReadHeaderTimeout = 300 * time.Millisecond }))
	addr := s.App.Addr()

	t.Run("slowloris", func(t *testing.T) {
		t.Parallel()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, "GET /api/v4/version HTTP/1.1\r\nHost: x\r\n"); err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		data, hung := readUntilClosed(t, c, 2*time.Second)
		if hung {
			t.Fatalf("connection still open after %v", time.Since(began))
		}
		if len(data) > 0 && !bytes.HasPrefix(data, []byte("HTTP/1.1 4")) {
			t.Errorf("slowloris got %q", data)
		}
	})

	t.Run("http/0.9 request line", func(t *testing.T) {
		t.Parallel()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, "GET /\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		data, hung := readUntilClosed(t, c, 2*time.Second)
		if hung {
			t.Fatal("no answer and connection still open")
		}
		if len(data) > 0 {
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(data)), nil)
			if err != nil || resp.StatusCode < 400 || resp.StatusCode > 499 {
				t.Errorf("got %q, want a 4xx or a closed connection", data)
			}
		}
	})

	t.Run("huge header", func(t *testing.T) {
		t.Parallel()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		go func() {
			req := "GET /api/v4/version HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 2<<20) + "\r\n\r\n"
			_, _ = io.WriteString(c, req) // the server may hang up mid-write
		}()
		data, hung := readUntilClosed(t, c, 5*time.Second)
		if hung {
			t.Fatal("no answer and connection still open")
		}
		if len(data) > 0 {
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(data)), nil)
			if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
				t.Errorf("got %q, want 431 or a closed connection", data)
			}
		}
	})

	t.Run("huge header via client", func(t *testing.T) {
		t.Parallel()
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/v4/samples", nil)
		req.Header.Set("X-Big", strings.Repeat("a", 2<<20))
		resp, err := noRedirect.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
				t.Errorf("got %d, want 431", resp.StatusCode)
			}
		}
	})

	t.Cleanup(func() {
		// After every abuse above, the server still answers.
		resp, raw := send(t, s, http.MethodGet, "/-/liveness", nil)
		wantBody(t, "liveness", resp, raw, 200, `{"status":"ok"}`)
	})
}

// ---------------------------------------------------------------------------
// 8. Operational endpoints
// ---------------------------------------------------------------------------

func TestOperationalEndpoints(t *testing.T) {
	t.Parallel()
	s := start(t)

	t.Run("version", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodGet, "/api/v4/version", nil)
		wantError(t, "anonymous", resp, raw, 401, `{"message":"401 Unauthorized"}`)
		v, r := fennec.Version()
		want, _ := json.Marshal(map[string]string{"revision": r, "version": v})
		resp, raw = send(t, s, http.MethodGet, "/api/v4/version", nil, "PRIVATE-TOKEN", s.RootToken)
		if resp.StatusCode != 200 {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		sameJSON(t, "version", raw, string(want))
		wantJSONType(t, "version", resp)
	})

	t.Run("probes", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodGet, "/-/health", nil)
		if resp.StatusCode != 200 || len(raw) == 0 {
			t.Errorf("health: got %d %q", resp.StatusCode, raw)
		}
		resp, raw = send(t, s, http.MethodGet, "/-/liveness", nil)
		wantBody(t, "liveness", resp, raw, 200, `{"status":"ok"}`)
		resp, raw = send(t, s, http.MethodGet, "/-/readiness", nil)
		wantBody(t, "readiness", resp, raw, 200, `{"status":"ok"}`)
	})

	t.Run("metrics", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodGet, "/api/v4/samples/7", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("get-sample: %d %s", resp.StatusCode, raw)
		}
		resp, raw = send(t, s, http.MethodGet, "/-/metrics", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("metrics: %d", resp.StatusCode)
		}
		text := string(raw)
		found := false
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "fennec_http_requests_total{") &&
				strings.Contains(line, `operation="get-sample"`) && strings.Contains(line, `code="200"`) && strings.Contains(line, `method="GET"`) {
				found = true
			}
		}
		if !found {
			t.Errorf("no fennec_http_requests_total line for get-sample in:\n%s", text)
		}
		if !strings.Contains(text, "\ngo_goroutines ") {
			t.Errorf("no go_goroutines in metrics")
		}
	})

	t.Run("openapi", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodGet, "/api/v4/openapi.json", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("got %d", resp.StatusCode)
		}
		var doc struct {
			Paths map[string]any `json:"paths"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("openapi.json: %v", err)
		}
		for _, p := range []string{"/api/v4/samples", "/api/v4/samples/{id}", "/api/v4/session", "/api/v4/user", "/api/v4/version"} {
			if _, ok := doc.Paths[p]; !ok {
				t.Errorf("openapi.json has no path %s", p)
			}
		}
	})

	t.Run("no schema key and one Link", func(t *testing.T) {
		resp, raw := send(t, s, http.MethodPost, "/api/v4/samples", strings.NewReader(`{"title":"t"}`), "Content-Type", jsonType)
		if resp.StatusCode != 201 {
			t.Fatalf("got %d %s", resp.StatusCode, raw)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["$schema"]; ok {
			t.Errorf("response has $schema: %s", raw)
		}
		if n := len(resp.Header.Values("Link")); n != 0 {
			t.Errorf("create-sample has %d Link headers: %q", n, resp.Header.Values("Link"))
		}
		resp, raw = send(t, s, http.MethodGet, "/api/v4/samples/7", nil)
		if bytes.Contains(raw, []byte("$schema")) || len(resp.Header.Values("Link")) != 0 {
			t.Errorf("get-sample: %q, Link %q", raw, resp.Header.Values("Link"))
		}
		resp, raw = send(t, s, http.MethodGet, "/api/v4/samples", nil)
		if bytes.Contains(raw, []byte("$schema")) {
			t.Errorf("list has $schema: %s", raw)
		}
		if n := len(resp.Header.Values("Link")); n != 1 || strings.Contains(resp.Header.Get("Link"), "schema") {
			t.Errorf("list has Link headers %q, want exactly the pagination one", resp.Header.Values("Link"))
		}
	})
}
