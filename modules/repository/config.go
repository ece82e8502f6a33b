package repository

import "github.com/fennec-forge/fennec/modules/repository/gitrepo"

// Config is the repository module's section of the configuration
// ("repository": max_push_bytes, housekeeping_pushes,
// receive_fsck_objects, and the SSH server's ssh_listen, ssh_external and
// limits), for hosts and tests that set it with config.Modify.
type Config = gitrepo.Config

// SectionName is the name of the module's configuration section.
const SectionName = "repository"
