package identity

import "github.com/fennec-forge/fennec/modules/identity/settings"

// Config is the identity module's section of the configuration
// ("identity": root_password, password_cost, directory_sync_interval,
// sign_in_throttle), for hosts and tests that set it with config.Modify.
type Config = settings.Config

// SectionName is the name of the module's configuration section.
const SectionName = settings.SectionName
