package log_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	flog "github.com/fennec-forge/fennec/core/log"
)

func TestAccessLogLineHasTheFieldsAndNoSecrets(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	var observed *flog.RequestInfo
	h := flog.Middleware(zap.New(core), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := flog.Info(w)
		info.Operation = "create-thing"
		info.UserID = 42
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("hello"))
	}), func(r *http.Request, info *flog.RequestInfo, took time.Duration) { observed = info })

	req := httptest.NewRequest(http.MethodPost, "/api/v4/things?private_token=SECRET&sudo=x", strings.NewReader("password=hunter2"))
	req.Header.Set("PRIVATE-TOKEN", "SECRET")
	h.ServeHTTP(httptest.NewRecorder(), req)

	entries := logs.All()
	if len(entries) != 1 {
		t.Fatalf("%d log lines, want 1", len(entries))
	}
	f := entries[0].ContextMap()
	want := map[string]any{"method": "POST", "path": "/api/v4/things", "status": int64(201), "operation": "create-thing", "user_id": int64(42), "bytes": int64(5)}
	for k, v := range want {
		if f[k] != v {
			t.Errorf("%s = %v (%T), want %v", k, f[k], f[k], v)
		}
	}
	if _, ok := f["duration"]; !ok {
		t.Error("no duration")
	}
	for k, v := range f {
		if s, ok := v.(string); ok && (strings.Contains(s, "SECRET") || strings.Contains(s, "hunter2")) {
			t.Errorf("field %s leaks a secret: %q", k, s)
		}
	}
	if observed == nil || observed.Status != 201 || observed.Operation != "create-thing" {
		t.Errorf("observer saw %+v", observed)
	}
}

func TestInfoWithoutMiddlewareIsHarmless(t *testing.T) {
	info := flog.Info(httptest.NewRecorder())
	info.UserID = 1 // a throwaway record: must not panic
	if flog.Info(nil) == nil {
		t.Fatal("nil")
	}
}

func TestStatusDefaultsTo200(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	h := flog.Middleware(zap.New(core), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	if got := logs.All()[0].ContextMap()["status"]; got != int64(200) {
		t.Fatalf("status %v", got)
	}
}
