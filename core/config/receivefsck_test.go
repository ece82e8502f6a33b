package config_test

import (
	"strings"
	"testing"
)

func TestReceiveFsckObjects(t *testing.T) {
	cfg, err := load(t, nil, nil)
	if err != nil || !cfg.ReceiveFsckObjects {
		t.Fatalf("default: %v %v, want on", cfg.ReceiveFsckObjects, err)
	}
	cfg, err = load(t, []string{"--config", writeFile(t, "receive_fsck_objects: false\n")}, nil)
	if err != nil || cfg.ReceiveFsckObjects {
		t.Fatalf("from the file: %v %v", cfg.ReceiveFsckObjects, err)
	}
	cfg, err = load(t, []string{"--config", writeFile(t, "receive_fsck_objects: false\n")}, map[string]string{"FENNEC_RECEIVE_FSCK_OBJECTS": "true"})
	if err != nil || !cfg.ReceiveFsckObjects {
		t.Fatalf("the environment over the file: %v %v", cfg.ReceiveFsckObjects, err)
	}
	if _, err := load(t, nil, map[string]string{"FENNEC_RECEIVE_FSCK_OBJECTS": "maybe"}); err == nil || !strings.Contains(err.Error(), "FENNEC_RECEIVE_FSCK_OBJECTS") {
		t.Fatalf("a bad value: %v", err)
	}
}
