package repository

import "github.com/fennec-forge/fennec/modules/repository/internal"

// Config is the repository module's section of the configuration
// ("repository": max_push_bytes, housekeeping_pushes,
// receive_fsck_objects), for hosts and tests that set it with
// config.Modify.
type Config = internal.Config

// SectionName is the name of the module's configuration section.
const SectionName = "repository"
