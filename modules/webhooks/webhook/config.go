package webhook

// The webhooks module's settings: the "webhooks" section of the
// configuration (fennec.ModuleConfig).

import (
	"errors"
	"time"
)

// SectionName is the name of the module's configuration section.
const SectionName = "webhooks"

// Config is the "webhooks" section.
type Config struct {
	// DeliveryLogRetention is how long each attempt stays in its hook's
	// delivery log; older ones are pruned in the background.
	DeliveryLogRetention time.Duration `yaml:"delivery_log_retention" help:"how long the delivery log of a hook keeps each attempt"`
	// Timeout bounds one delivery (connection, request and response), as
	// GitLab's webhook_timeout.
	Timeout time.Duration `yaml:"timeout" help:"time limit of one hook delivery"`
	// MaxAttempts is how many times a delivery is tried when it fails with
	// a connection error or a 5xx (GitLab: 1 + 4 retries).
	MaxAttempts int `yaml:"max_attempts" help:"tries of a delivery that fails with a connection error or a 5xx"`
	// RetryBackoff is the wait after the first failure; it doubles after
	// each further one, up to MaxBackoff.
	RetryBackoff time.Duration `yaml:"retry_backoff" help:"wait before the first retry of a failed delivery (doubles each time)"`
	MaxBackoff   time.Duration `yaml:"max_backoff" help:"longest wait between two tries of a delivery"`
	// PruneInterval is how often the delivery log is pruned.
	PruneInterval time.Duration `yaml:"prune_interval" help:"how often old delivery log entries are removed"`
}

// DefaultConfig is the section with nothing set.
func DefaultConfig() Config {
	return Config{
		DeliveryLogRetention: 7 * 24 * time.Hour,
		Timeout:              10 * time.Second,
		MaxAttempts:          5,
		RetryBackoff:         10 * time.Second,
		MaxBackoff:           10 * time.Minute,
		PruneInterval:        time.Hour,
	}
}

// Validate refuses settings the workers cannot run with.
func (c Config) Validate() error {
	switch {
	case c.DeliveryLogRetention <= 0:
		return errors.New("webhooks: delivery_log_retention must be positive")
	case c.Timeout <= 0:
		return errors.New("webhooks: timeout must be positive")
	case c.MaxAttempts < 1:
		return errors.New("webhooks: max_attempts must be at least 1")
	case c.RetryBackoff <= 0 || c.MaxBackoff < c.RetryBackoff:
		return errors.New("webhooks: retry_backoff must be positive and max_backoff at least as long")
	case c.PruneInterval <= 0:
		return errors.New("webhooks: prune_interval must be positive")
	}
	return nil
}
