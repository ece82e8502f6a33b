package config_test

import (
	"strings"
	"testing"
)

func TestAllowLocalRequests(t *testing.T) {
	cfg, err := load(t, nil, nil)
	if err != nil || cfg.AllowLocalRequests {
		t.Fatalf("default: %v %v, want off", cfg.AllowLocalRequests, err)
	}
	cfg, err = load(t, []string{"--config", writeFile(t, "allow_local_requests: true\n")}, nil)
	if err != nil || !cfg.AllowLocalRequests {
		t.Fatalf("from the file: %v %v", cfg.AllowLocalRequests, err)
	}
	cfg, err = load(t, []string{"--config", writeFile(t, "allow_local_requests: true\n")}, map[string]string{"FENNEC_ALLOW_LOCAL_REQUESTS": "false"})
	if err != nil || cfg.AllowLocalRequests {
		t.Fatalf("the environment over the file: %v %v", cfg.AllowLocalRequests, err)
	}
	if _, err := load(t, nil, map[string]string{"FENNEC_ALLOW_LOCAL_REQUESTS": "sure"}); err == nil || !strings.Contains(err.Error(), "FENNEC_ALLOW_LOCAL_REQUESTS") {
		t.Fatalf("a bad value: %v", err)
	}
}
