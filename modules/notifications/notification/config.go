package notification

// The notifications module's settings: the "notifications" section of the
// configuration (fennec.ModuleConfig).

import (
	"errors"
	"net"
	"strconv"
	"time"
)

// Config is the notifications module's section.
type Config struct {
	// SMTPAddress is host:port of the mail server. Empty: mails are
	// written as .eml files to <data>/mail/outbox instead.
	SMTPAddress string `yaml:"smtp_address" env:"FENNEC_SMTP_ADDRESS" flag:"smtp-address" help:"host:port of the SMTP server that sends notification mail; empty: mails go to <data>/mail/outbox as .eml files"`
	// SMTPFrom is the From address; empty: fennec@<external URL's host>.
	SMTPFrom     string `yaml:"smtp_from" env:"FENNEC_SMTP_FROM" flag:"smtp-from" default:"fennec@<external URL's host>" help:"From address of notification mail"`
	SMTPUser     string `yaml:"smtp_user" env:"FENNEC_SMTP_USER" help:"SMTP user name (authentication is off when empty)"`
	SMTPPassword string `yaml:"smtp_password" env:"FENNEC_SMTP_PASSWORD" help:"SMTP password (secret: prefer the environment or a file readable by fennec alone)"`
	// SMTPTLS: none (plain), starttls (required), tls (implicit TLS, port 465 style).
	SMTPTLS string `yaml:"smtp_tls" env:"FENNEC_SMTP_TLS" help:"none, starttls (required) or tls (implicit, as on port 465)"`
	// SMTPCAFile names a PEM file of certificate authorities trusted for
	// the SMTP server's certificate besides the system's (an internal
	// server with its own CA).
	SMTPCAFile  string `yaml:"smtp_ca_file" env:"FENNEC_SMTP_CA_FILE" help:"PEM file of CA certificates trusted for the SMTP server, besides the system's"`
	SMTPReplyTo string `yaml:"smtp_reply_to" env:"FENNEC_SMTP_REPLY_TO" help:"Reply-To address of notification mail (none when empty)"`
	// SMTPTimeout bounds one connection's dial and each command.
	SMTPTimeout time.Duration `yaml:"smtp_timeout" help:"timeout of the SMTP connection and of each command"`
	// RetryInitial and RetryMax shape the backoff while the SMTP server
	// cannot be reached or refuses temporarily: the wait doubles from
	// RetryInitial up to RetryMax.
	RetryInitial time.Duration `yaml:"retry_initial" help:"first wait before retrying mail delivery after a failure (doubles each time)"`
	RetryMax     time.Duration `yaml:"retry_max" help:"longest wait between mail delivery attempts"`
}

// DefaultConfig is the section with nothing set.
func DefaultConfig() Config {
	return Config{SMTPTLS: "none", SMTPTimeout: 30 * time.Second, RetryInitial: time.Second, RetryMax: 10 * time.Minute}
}

// Validate refuses values that would fail late or obscurely.
func (c Config) Validate() error {
	if c.SMTPAddress != "" {
		host, port, err := net.SplitHostPort(c.SMTPAddress)
		if err != nil || host == "" {
			return errors.New("config: notifications.smtp_address must be host:port")
		}
		if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
			return errors.New("config: notifications.smtp_address has no valid port")
		}
	}
	switch c.SMTPTLS {
	case "", "none", "starttls", "tls":
	default:
		return errors.New("config: notifications.smtp_tls must be none, starttls or tls")
	}
	if c.SMTPTimeout <= 0 || c.RetryInitial <= 0 || c.RetryMax < c.RetryInitial {
		return errors.New("config: notifications.smtp_timeout and retry_initial must be positive, retry_max at least retry_initial")
	}
	return nil
}
