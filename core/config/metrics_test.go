package config_test

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func TestMetricsSettings(t *testing.T) {
	cfg, err := load(t, []string{"--config", writeFile(t, "metrics_token: from-file\nmetrics_allow: [10.0.0.0/8, 192.0.2.7, \"2001:db8::/32\"]\n")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cfg.MetricsPrefixes()
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"), netip.MustParsePrefix("2001:db8::/32")}
	if err != nil || !reflect.DeepEqual(got, want) || cfg.MetricsToken != "from-file" {
		t.Fatalf("%v %v %q", got, err, cfg.MetricsToken)
	}
	cfg, err = load(t, nil, map[string]string{"FENNEC_METRICS_TOKEN": "from-env", "FENNEC_METRICS_ALLOW": "127.0.0.1, ::1"})
	if err != nil || cfg.MetricsToken != "from-env" || len(cfg.MetricsAllow) != 2 {
		t.Fatalf("env: %v %+v", err, cfg)
	}
	if _, err := load(t, []string{"--config", writeFile(t, "metrics_allow: [10.0.0.0/33]\n")}, nil); err == nil || !strings.Contains(err.Error(), "metrics_allow") {
		t.Fatalf("a bad CIDR: %v", err)
	}
}
