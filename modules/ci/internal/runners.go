package internal

// Runners: GitLab Runner processes that register with a registration token
// (the instance's, for a shared runner, or a project's runners_token, for
// that project's runner) and then take jobs through the runner API
// (runnerprotocol.go) from the same queue the executor plugins take theirs from.
// A runner's token is stored as its hash only; the instance's registration
// token is stored sealed, since administrators are shown it.

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	fennec "github.com/fennec-forge/fennec/core"
	"github.com/fennec-forge/fennec/core/auth"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
)

// Runner is a registered GitLab Runner.
type Runner struct {
	ID int64 `json:"id"`
	// TokenHash is the hash of the runner's token (hashToken).
	TokenHash   string `json:"token_hash"`
	Description string `json:"description"`
	Active      bool   `json:"active"`
	// IsShared: registered with the instance's token, it takes jobs of
	// every project whose shared runners are enabled; otherwise it takes
	// those of the projects it is enabled on (Projects).
	IsShared    bool     `json:"is_shared"`
	Locked      bool     `json:"locked"`
	RunUntagged bool     `json:"run_untagged"`
	Tags        []string `json:"tags"`
	Projects    []int64  `json:"projects"`
	// What the runner says of itself (its info).
	Name         string `json:"name"`
	Version      string `json:"version"`
	Revision     string `json:"revision"`
	Platform     string `json:"platform"`
	Architecture string `json:"architecture"`
	// ContactedAt is the runner's last request, recorded at most once a
	// minute (onlineWithin is an hour, so finer would only cost writes).
	ContactedAt *time.Time `json:"contacted_at"`
	CreatedAt   time.Time  `json:"created_at"`
}

func (r *Runner) RecordID() int64      { return r.ID }
func (r *Runner) SetRecordID(id int64) { r.ID = id }

// runnerSetting is one of the instance's runner settings (the shared
// registration token).
type runnerSetting struct {
	ID    int64  `json:"id"`
	Key   string `json:"key"`
	Value string `json:"value"`
}

func (s *runnerSetting) RecordID() int64      { return s.ID }
func (s *runnerSetting) SetRecordID(id int64) { s.ID = id }

var (
	runners = store.NewTable[int64, Runner]("ci.runners",
		store.Index[Runner]{Name: "token", Unique: true, Keys: func(r *Runner) []string { return []string{r.TokenHash} }},
		store.Index[Runner]{Name: "project", Keys: func(r *Runner) []string {
			out := make([]string, len(r.Projects))
			for i, p := range r.Projects {
				out[i] = store.IDString(p)
			}
			return out
		}},
		store.Index[Runner]{Name: "shared", Keys: func(r *Runner) []string {
			if r.IsShared {
				return []string{"shared"}
			}
			return nil
		}})
	runnerSettings = store.NewTable[int64, runnerSetting]("ci.runner_settings",
		store.Index[runnerSetting]{Name: "key", Unique: true, Keys: func(s *runnerSetting) []string { return []string{s.Key} }})
)

const (
	// settingRegistrationToken is the key of the instance's shared
	// registration token; purposeRegistrationToken seals it.
	settingRegistrationToken = "registration_token"
	purposeRegistrationToken = "ci.runners.registration_token"
	// onlineWithin: a runner seen this recently is online (GitLab's hour).
	onlineWithin = time.Hour
	// contactEvery is how stale contacted_at may get before a request
	// writes it again.
	contactEvery = time.Minute
)

// errRunnerForbidden: the runner protocol's refusal of an unknown runner
// token or registration token (httprunnerprotocol.go answers it).
var errRunnerForbidden = errors.New("ci: unknown runner or registration token")

// registrationToken is the instance's shared registration token: the
// configured one, or one made (and stored sealed) on first use.
func (s *Service) registrationToken(ctx context.Context) (string, error) {
	if s.cfg.RunnersRegistrationToken != "" {
		return s.cfg.RunnersRegistrationToken, nil
	}
	var sealed string
	err := s.db.View(ctx, func(tx *store.Tx) error {
		st, err := runnerSettings.GetBy(tx, "key", settingRegistrationToken)
		if err == nil {
			sealed = st.Value
		}
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return "", err
	}
	if sealed != "" {
		return s.box.Unseal(sealed, purposeRegistrationToken)
	}
	return s.resetRegistrationToken(ctx, false)
}

// resetRegistrationToken makes a new shared registration token (the old
// one stops registering runners; registered runners keep their own). With
// force false it only makes one when there is none yet.
func (s *Service) resetRegistrationToken(ctx context.Context, force bool) (string, error) {
	if s.cfg.RunnersRegistrationToken != "" {
		return "", cicd.ErrRegistrationTokenConfigured
	}
	token := newToken()
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		st, err := runnerSettings.GetBy(tx, "key", settingRegistrationToken)
		if errors.Is(err, store.ErrNotFound) {
			return runnerSettings.Insert(tx, &runnerSetting{Key: settingRegistrationToken, Value: s.box.Seal(token, purposeRegistrationToken)})
		}
		if err != nil {
			return err
		}
		if !force {
			token, err = s.box.Unseal(st.Value, purposeRegistrationToken)
			return err
		}
		st.Value = s.box.Seal(token, purposeRegistrationToken)
		return runnerSettings.Update(tx, st)
	})
	return token, err
}

// registration is what POST /runners asks for.
type registration struct {
	Token       string
	Description string
	Tags        []string
	RunUntagged *bool
	Locked      *bool
	Active      *bool
	Info        runnerInfo
}

// runnerInfo is what a runner says of itself on every request.
type runnerInfo struct {
	Name         string `json:"name"`
	Version      string `json:"version"`
	Revision     string `json:"revision"`
	Platform     string `json:"platform"`
	Architecture string `json:"architecture"`
}

// Bounds on what a runner may store about itself.
const (
	maxRunnerDescription = 1024
	maxRunnerTags        = 100
	maxRunnerTag         = 255
	maxRunnerInfoField   = 255
)

// normalizeTags trims, drops empty and repeated tags, and checks bounds; a
// refusal is a *cicd.InvalidTagsError.
func normalizeTags(in []string) ([]string, error) {
	out := []string{}
	for _, t := range in {
		t = strings.TrimSpace(t)
		if t == "" || slices.Contains(out, t) {
			continue
		}
		if len(t) > maxRunnerTag || strings.ContainsAny(t, "\x00\n\r,") {
			return nil, &cicd.InvalidTagsError{Reason: fmt.Sprintf("tag %.20q is invalid", t)}
		}
		out = append(out, t)
	}
	if len(out) > maxRunnerTags {
		return nil, &cicd.InvalidTagsError{Reason: fmt.Sprintf("at most %d tags", maxRunnerTags)}
	}
	return out, nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// register makes a runner from a registration token: shared with the
// instance's, a project's runner with its runners_token. It returns the
// runner and its token (shown once). A description too long is refused
// before the token is looked at.
func (s *Service) register(ctx context.Context, req registration) (*Runner, string, error) {
	if len(req.Description) > maxRunnerDescription {
		return nil, "", cicd.ErrRunnerDescriptionTooLong
	}
	if req.Token == "" {
		return nil, "", errRunnerForbidden
	}
	shared, err := s.registrationToken(ctx)
	if err != nil {
		return nil, "", err
	}
	r := &Runner{Active: true, RunUntagged: true, CreatedAt: s.now()}
	if subtle.ConstantTimeCompare([]byte(req.Token), []byte(shared)) == 1 {
		r.IsShared = true
	} else {
		pid, err := s.runnersTokens.ProjectIDByRunnersToken(ctx, req.Token)
		if err != nil {
			return nil, "", errRunnerForbidden
		}
		r.Projects = []int64{pid}
	}
	if req.RunUntagged != nil {
		r.RunUntagged = *req.RunUntagged
	}
	if req.Locked != nil {
		r.Locked = *req.Locked
	}
	if req.Active != nil {
		r.Active = *req.Active
	}
	if r.Tags, err = normalizeTags(req.Tags); err != nil {
		return nil, "", err
	}
	if !r.RunUntagged && len(r.Tags) == 0 {
		return nil, "", cicd.ErrRunnerTagsNeeded
	}
	r.Description = clip(req.Description, maxRunnerDescription)
	r.applyInfo(req.Info)
	token := newToken()
	r.TokenHash = hashToken(token)
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		r.ID = 0
		return runners.Insert(tx, r)
	})
	if err != nil {
		return nil, "", err
	}
	s.runnerQueue.bump()
	return r, token, nil
}

// applyInfo records what the runner says of itself; it reports whether
// anything changed.
func (r *Runner) applyInfo(in runnerInfo) bool {
	next := runnerInfo{Name: clip(in.Name, maxRunnerInfoField), Version: clip(in.Version, maxRunnerInfoField),
		Revision: clip(in.Revision, maxRunnerInfoField), Platform: clip(in.Platform, maxRunnerInfoField),
		Architecture: clip(in.Architecture, maxRunnerInfoField)}
	if next == (runnerInfo{Name: r.Name, Version: r.Version, Revision: r.Revision, Platform: r.Platform, Architecture: r.Architecture}) {
		return false
	}
	r.Name, r.Version, r.Revision, r.Platform, r.Architecture = next.Name, next.Version, next.Revision, next.Platform, next.Architecture
	return true
}

// runnerByToken authenticates a runner by its token.
func (s *Service) runnerByToken(ctx context.Context, token string) (*Runner, error) {
	if token == "" {
		return nil, errRunnerForbidden
	}
	var r *Runner
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		r, err = runners.GetBy(tx, "token", hashToken(token))
		if errors.Is(err, store.ErrNotFound) {
			return errRunnerForbidden
		}
		return err
	})
	return r, err
}

// touchRunner records a runner's contact (and info), at most once every
// contactEvery unless its info changed: a poll every few seconds must not
// be a write every few seconds.
func (s *Service) touchRunner(ctx context.Context, r *Runner, info *runnerInfo) {
	now := s.now()
	changed := false
	if info != nil {
		probe := *r
		changed = probe.applyInfo(*info)
	}
	if !changed && r.ContactedAt != nil && now.Sub(*r.ContactedAt) < contactEvery {
		return
	}
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		cur, err := runners.Get(tx, r.ID)
		if err != nil {
			return err
		}
		if info != nil {
			cur.applyInfo(*info)
		}
		cur.ContactedAt = &now
		*r = *cur
		return runners.Update(tx, cur)
	})
	if err != nil && !errors.Is(err, store.ErrNotFound) && ctx.Err() == nil {
		s.log.Warn("recording a runner's contact", zap.Error(err))
	}
}

// unregister removes the runner a token belongs to; one removed meanwhile
// is an unknown runner too (errRunnerForbidden).
func (s *Service) unregister(ctx context.Context, token string) error {
	r, err := s.runnerByToken(ctx, token)
	if err != nil {
		return err
	}
	if err := s.deleteRunner(ctx, r.ID); errors.Is(err, cicd.ErrRunnerNotFound) {
		return fmt.Errorf("%w: %w", errRunnerForbidden, err)
	} else if err != nil {
		return err
	}
	return nil
}

// deleteRunner removes a runner; its running jobs are left to the stuck
// detection (the runner may still be running them, and will be refused).
func (s *Service) deleteRunner(ctx context.Context, id int64) error {
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		err := runners.Delete(tx, id)
		if errors.Is(err, store.ErrNotFound) {
			return cicd.ErrRunnerNotFound
		}
		return err
	})
	if err == nil {
		s.runnerQueue.bump()
	}
	return err
}

// RunnerCommandSpecs declare the module's admin commands.
var RunnerCommandSpecs = []fennec.AdminCommandSpec{
	{Name: "ci-runners-token", Flags: []fennec.AdminFlag{{Name: "reset", Usage: "make a new token (the old one stops registering runners)"}},
		Summary: "print the instance's shared runners registration token (gitlab-runner register --registration-token)"},
}

// Commands are the module's admin commands; they call cicd.Service as the
// server itself (an administrator).
func Commands(s *Service) []fennec.AdminCommand {
	return []fennec.AdminCommand{{Name: "ci-runners-token", Run: func(ctx context.Context, args []string, out io.Writer) error {
		ctx = auth.WithPrincipal(ctx, auth.System())
		var token string
		var err error
		if slices.Contains(args, "--reset") {
			token, err = s.ResetRegistrationToken(ctx)
		} else {
			token, err = s.RegistrationToken(ctx)
		}
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(out, token)
		return err
	}}}
}
