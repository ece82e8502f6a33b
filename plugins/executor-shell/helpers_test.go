package main

import (
	"encoding/json"

	sdkplugin "github.com/fennec-forge/fennec/sdk/plugin"
)

type sdkKind = sdkplugin.Kind

func jsonOf(v any) ([]byte, error) { return json.Marshal(v) }
