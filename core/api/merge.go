package api

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	json "github.com/go-json-experiment/json/v1"
)

type merged struct {
	values map[string]any
	// json is the body handed to Huma; nil when the operation has no body.
	json []byte
}

// merge reads query, urlencoded, multipart and JSON parameters into one map
// (body wins over query), coerces values to the operation's body schema and
// drops unknown keys. Rails-style keys (a[]=1, a[][k]=v, a[k]=v) become arrays
// and objects.
//
// gate, when set, is called with the first credentialPeekBytes of a body
// that is longer than that, before the rest is read; an error from it ends
// the request unread (an operation that needs a caller, and none known yet).
func (a *API) merge(w http.ResponseWriter, r *http.Request, rawQuery string, op *huma.Operation, limit int64, gate func(prefix []byte) error) (merged, error) {
	values := parseRails(queryPairs(rawQuery))
	if r.Body != nil && r.Body != http.NoBody {
		// The body is under the read deadline guardBody set for the whole
		// request: a body that stops arriving fails here with a timeout, and
		// the connection is closed after the 408.
		src := http.MaxBytesReader(w, r.Body, limit)
		var buf bytes.Buffer
		var err error
		if gate != nil {
			if _, err = io.CopyN(&buf, src, credentialPeekBytes+1); err == nil {
				err = gate(buf.Bytes()[:credentialPeekBytes])
				if err != nil {
					return merged{}, err
				}
			} else if err == io.EOF {
				err = nil
			}
		}
		if err == nil {
			_, err = buf.ReadFrom(src)
		}
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				return merged{}, TooLarge()
			}
			return merged{}, &Error{Status: http.StatusRequestTimeout, Message: "408 Request Timeout"}
		}
		fromBody, err := parseBody(r.Header.Get("Content-Type"), buf.Bytes())
		if err != nil {
			return merged{}, err
		}
		for k, v := range fromBody {
			values[k] = v
		}
	}
	out := merged{values: values}
	if op.RequestBody == nil {
		return out, nil
	}
	schema := bodySchema(a.huma.OpenAPI().Components.Schemas, op)
	body := map[string]any{}
	if schema != nil {
		if c, ok := coerce(a.huma.OpenAPI().Components.Schemas, schema, values).(map[string]any); ok {
			body = c
		}
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return merged{}, BadRequest("400 Bad request - parameters cannot be encoded")
	}
	out.json = raw
	return out, nil
}

func parseBody(contentType string, body []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return map[string]any{}, nil
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if contentType == "" {
		// curl -d without a type, or a client that forgot it: sniff JSON.
		mt = "application/x-www-form-urlencoded"
		if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '{' {
			mt = "application/json"
		}
	} else if err != nil {
		return nil, unsupported()
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil || dec.More() {
			return nil, BadRequest("400 Bad request - the request body is not valid JSON")
		}
		if v == nil {
			return map[string]any{}, nil // a JSON null body (client-go sends one for empty options)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, BadRequest("400 Bad request - the request body must be a JSON object")
		}
		return m, nil
	case mt == "application/x-www-form-urlencoded":
		return parseRails(queryPairs(string(body))), nil
	case mt == "multipart/form-data":
		return parseMultipart(body, params["boundary"])
	}
	return nil, unsupported()
}

func unsupported() error {
	return &Error{Status: http.StatusUnsupportedMediaType, Message: "415 Unsupported Media Type"}
}

// parseMultipart keeps the text fields of a multipart form; file parts are
// only read by operations with RawBody.
func parseMultipart(body []byte, boundary string) (map[string]any, error) {
	if boundary == "" {
		return nil, BadRequest("400 Bad request - multipart body without boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	var pairs [][2]string
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, BadRequest("400 Bad request - malformed multipart body")
		}
		if part.FileName() != "" {
			part.Close()
			continue
		}
		v, err := io.ReadAll(part)
		part.Close()
		if err != nil {
			return nil, BadRequest("400 Bad request - malformed multipart body")
		}
		pairs = append(pairs, [2]string{part.FormName(), string(v)})
	}
	return parseRails(pairs), nil
}

// queryPairs splits a query string in order (url.ParseQuery loses the order
// that a[][k]=v grouping needs). Undecodable pairs are skipped.
func queryPairs(raw string) [][2]string {
	var out [][2]string
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		k, err1 := url.QueryUnescape(k)
		v, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil || k == "" {
			continue
		}
		out = append(out, [2]string{k, v})
	}
	return out
}

// normalizeQuery turns GitLab's name[]=a&name[]=b into name=a,b, the form
// Huma's query parser splits into an array (values containing a comma cannot
// be told apart from two values; GitLab's array parameters have none).
func normalizeQuery(r *http.Request) {
	raw := r.URL.RawQuery
	if !strings.Contains(raw, "[]") && !strings.Contains(raw, "%5B%5D") && !strings.Contains(raw, "%5b%5d") {
		return
	}
	pairs := queryPairs(raw)
	arrays := map[string][]string{}
	var order []string
	q := make([]string, 0, len(pairs))
	for _, p := range pairs {
		name, isArray := strings.CutSuffix(p[0], "[]")
		if !isArray {
			q = append(q, url.QueryEscape(p[0])+"="+url.QueryEscape(p[1]))
			continue
		}
		if _, seen := arrays[name]; !seen {
			order = append(order, name)
		}
		arrays[name] = append(arrays[name], p[1])
	}
	for _, name := range order {
		q = append(q, url.QueryEscape(name)+"="+url.QueryEscape(strings.Join(arrays[name], ",")))
	}
	r.URL.RawQuery = strings.Join(q, "&")
}

// parseRails builds nested values from Rails-style keys, in order:
// a=1, a[]=1 (array), a[b]=1 (object), a[][b]=1&a[][c]=2 (array of objects,
// a new object starting whenever a key repeats).
func parseRails(pairs [][2]string) map[string]any {
	root := map[string]any{}
	for _, p := range pairs {
		segs := splitKey(p[0])
		if segs == nil {
			continue
		}
		assign(root, segs, p[1])
	}
	return root
}

func splitKey(k string) []string {
	i := strings.IndexByte(k, '[')
	if i <= 0 {
		return []string{k}
	}
	segs := []string{k[:i]}
	rest := k[i:]
	for rest != "" {
		if rest[0] != '[' {
			return []string{k} // not Rails syntax; keep the key whole
		}
		j := strings.IndexByte(rest, ']')
		if j < 0 {
			return []string{k}
		}
		segs = append(segs, rest[1:j])
		rest = rest[j+1:]
	}
	return segs
}

func assign(m map[string]any, segs []string, v string) {
	key := segs[0]
	if len(segs) == 1 {
		m[key] = v
		return
	}
	if segs[1] == "" { // array
		arr, _ := m[key].([]any)
		if len(segs) == 2 {
			m[key] = append(arr, v)
			return
		}
		// Array of objects: continue the last object unless it already has
		// this key, then start a new one.
		var last map[string]any
		if n := len(arr); n > 0 {
			last, _ = arr[n-1].(map[string]any)
		}
		if last == nil || hasPath(last, segs[2:]) {
			last = map[string]any{}
			arr = append(arr, last)
		}
		assign(last, segs[2:], v)
		m[key] = arr
		return
	}
	child, ok := m[key].(map[string]any)
	if !ok {
		child = map[string]any{}
		m[key] = child
	}
	assign(child, segs[1:], v)
}

func hasPath(m map[string]any, segs []string) bool {
	v, ok := m[segs[0]]
	if !ok {
		return false
	}
	if len(segs) == 1 || segs[1] == "" {
		return true
	}
	child, ok := v.(map[string]any)
	return ok && hasPath(child, segs[1:])
}

func bodySchema(reg huma.Registry, op *huma.Operation) *huma.Schema {
	mt := op.RequestBody.Content["application/json"]
	if mt == nil || mt.Schema == nil {
		return nil
	}
	return deref(reg, mt.Schema)
}

func deref(reg huma.Registry, s *huma.Schema) *huma.Schema {
	for s != nil && s.Ref != "" {
		s = reg.SchemaFromRef(s.Ref)
	}
	return s
}

// coerce converts form strings to the types the schema asks for and drops
// keys the schema does not know. Values it cannot convert are left as they
// are, so Huma's validation reports them as invalid.
func coerce(reg huma.Registry, s *huma.Schema, v any) any {
	s = deref(reg, s)
	if s == nil || v == nil {
		return v
	}
	typ := s.Type
	if typ == "" && len(s.OneOf) > 0 {
		return v
	}
	switch typ {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		if len(s.Properties) == 0 {
			return m // a free-form object
		}
		out := make(map[string]any, len(m))
		for k, val := range m {
			prop, known := s.Properties[k]
			if !known {
				continue
			}
			out[k] = coerce(reg, prop, val)
		}
		return out
	case "array":
		var items []any
		switch x := v.(type) {
		case []any:
			items = x
		case map[string]any: // {"0": .., "1": ..}
			keys := sortedKeys(x)
			sort.SliceStable(keys, func(i, j int) bool {
				a, _ := strconv.Atoi(keys[i])
				b, _ := strconv.Atoi(keys[j])
				return a < b
			})
			for _, k := range keys {
				items = append(items, x[k])
			}
		case string:
			if x == "" {
				items = []any{}
			} else {
				for _, part := range strings.Split(x, ",") {
					items = append(items, strings.TrimSpace(part))
				}
			}
		default:
			items = []any{x}
		}
		out := make([]any, len(items))
		for i, it := range items {
			out[i] = coerce(reg, s.Items, it)
		}
		return out
	case "boolean":
		switch x := v.(type) {
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "true", "1", "yes", "t", "on":
				return true
			case "false", "0", "no", "f", "off":
				return false
			}
		case json.Number:
			if x.String() == "1" {
				return true
			}
			if x.String() == "0" {
				return false
			}
		}
		return v
	case "integer":
		switch x := v.(type) {
		case string:
			if n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
				return n
			}
		case bool:
			if x {
				return 1
			}
			return 0
		}
		return v
	case "number":
		if x, ok := v.(string); ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
				return f
			}
		}
		return v
	case "string":
		switch x := v.(type) {
		case json.Number:
			return x.String()
		case bool:
			return strconv.FormatBool(x)
		case []any:
			// GitLab's list parameters (labels, add_labels, tag_list, ...)
			// are comma-separated strings, and clients send them as JSON
			// arrays too (python-gitlab does): one rule here, for every
			// operation. Only arrays of plain scalars are joined; anything
			// else stays as it is and is refused by validation.
			if joined, ok := joinScalars(x); ok {
				return joined
			}
		}
		return v
	}
	return v
}

// joinScalars joins strings and numbers with commas, the form of a
// comma-separated list parameter; ok is false when an item is not a scalar.
func joinScalars(items []any) (string, bool) {
	parts := make([]string, len(items))
	for i, it := range items {
		switch x := it.(type) {
		case string:
			parts[i] = x
		case json.Number:
			parts[i] = x.String()
		default:
			return "", false
		}
	}
	return strings.Join(parts, ","), true
}
