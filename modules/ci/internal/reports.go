package internal

// artifacts:reports (junit and dotenv). A job's report files are kept
// beside its archive, one file per report type, as concatenated gzip
// members (one member per collected file): the form gitlab-runner uploads
// them in (artifact_format gzip), and the form the shell path writes after
// taking the files out of the job's archive. Keeping one form means one
// reader, bounded the same way for both executors.

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/fennec-forge/fennec/core/blob"
	"github.com/fennec-forge/fennec/core/store"
	"github.com/fennec-forge/fennec/modules/ci/internal/pipeline"
)

// The report types Fennec keeps; other types are parsed (the keyword)
// and not collected.
const (
	reportJUnit  = "junit"
	reportDotenv = "dotenv"
)

// GitLab's dotenv bounds: the file under 5 KiB, at most 150 variables.
const (
	maxDotenvBytes     = 5 * 1024
	maxDotenvVariables = 150
	// maxReportFiles bounds the files one report collects (a glob that
	// matches a whole tree must not open each entry).
	maxReportFiles = 1000
)

var (
	errDotenvInvalidFormat = errors.New("Invalid Format")
	errDotenvTooBig        = fmt.Errorf("Dotenv Artifact Too Big. Maximum Allowable Size: %d", maxDotenvBytes)
	errDotenvTooMany       = fmt.Errorf("Dotenv files cannot have more than %d variables", maxDotenvVariables)
	errDotenvKey           = errors.New("Validation failed: Key can contain only letters, digits and '_'.")
	errReportTooLarge      = errors.New("the report is too large")
)

// keptReport says whether Fennec collects a report type.
func keptReport(kind string) bool { return kind == reportJUnit || kind == reportDotenv }

// reportKey is the blob a job's report of a type is kept in.
func reportKey(jobID int64, kind string) string {
	return "ci/reports/" + shard(jobID) + "/" + strconv.FormatInt(jobID, 10) + "." + kind + ".gz"
}

// reportLimit is the most a report of a type may hold, inflated.
func (s *Service) reportLimit(kind string) int64 {
	if kind == reportDotenv {
		return maxDotenvBytes
	}
	return s.cfg.MaxArtifactsBytes
}

// dotenvVariable is one KEY=value line of a dotenv report.
type dotenvVariable struct{ Key, Value string }

var dotenvKey = regexp.MustCompile(`^[a-zA-Z0-9_]+$`)

// parseDotenv reads a dotenv report as GitLab does: every line is
// KEY=value (split at the first "=", both sides trimmed), no blank lines,
// no comments, no quoting, no multiline values; a later key replaces an
// earlier one. The data is bounded by the caller (maxDotenvBytes).
func parseDotenv(data []byte) ([]dotenvVariable, error) {
	if len(data) >= maxDotenvBytes {
		return nil, errDotenvTooBig
	}
	if !utf8.Valid(data) {
		return nil, errDotenvInvalidFormat
	}
	var out []dotenvVariable
	index := map[string]int{}
	text := strings.TrimSuffix(string(data), "\n")
	if text == "" {
		return nil, nil
	}
	for _, line := range strings.Split(text, "\n") {
		key, value, ok := strings.Cut(strings.TrimSuffix(line, "\r"), "=")
		if !ok {
			return nil, errDotenvInvalidFormat
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !dotenvKey.MatchString(key) {
			return nil, errDotenvKey
		}
		if i, seen := index[key]; seen {
			out[i].Value = value
			continue
		}
		index[key] = len(out)
		out = append(out, dotenvVariable{key, value})
	}
	if len(out) > maxDotenvVariables {
		return nil, errDotenvTooMany
	}
	return out, nil
}

// readReport inflates a stored report's members, at most limit bytes in
// all: nil when the job has none.
func (s *Service) readReport(ctx context.Context, key string, limit int64) ([][]byte, error) {
	f, err := s.blobs.Open(ctx, key)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return inflateMembers(bufio.NewReader(f), limit)
}

// inflateMembers reads gzip members one by one, refusing more than limit
// inflated bytes in all (a gzip bomb stops at the limit) or more than
// maxReportFiles members.
func inflateMembers(r io.Reader, limit int64) ([][]byte, error) {
	br := bufio.NewReader(r)
	zr, err := gzip.NewReader(br)
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out [][]byte
	left := limit
	for {
		zr.Multistream(false)
		b, err := io.ReadAll(io.LimitReader(zr, left+1))
		if err != nil {
			return nil, err
		}
		if int64(len(b)) > left {
			return nil, errReportTooLarge
		}
		left -= int64(len(b))
		out = append(out, b)
		if len(out) > maxReportFiles {
			return nil, errReportTooLarge
		}
		if err := zr.Reset(br); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
	}
}

// writeReport keeps members as a job's report of a type (one Put: a
// reader never sees half of one). The members are bounded by the type's
// limit, so the compressed form is built in memory.
func (s *Service) writeReport(ctx context.Context, jobID int64, kind string, members [][]byte) error {
	var buf bytes.Buffer
	for _, m := range members {
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(m); err != nil {
			return err
		}
		if err := zw.Close(); err != nil {
			return err
		}
	}
	_, err := s.blobs.Put(ctx, reportKey(jobID, kind), &buf)
	return err
}

// checkReport validates a report before it is kept: a dotenv report that
// GitLab would refuse fails the job with GitLab's message; a junit
// report is kept as it is and read leniently (a bad one is a suite
// error, as in GitLab).
func checkReport(kind string, members [][]byte) error {
	if kind != reportDotenv {
		return nil
	}
	_, err := parseDotenv(bytes.Join(members, nil))
	return err
}

// collectReports takes the files of a job's reports out of its stored
// archive (the shell path: the executor put them there, handover added
// their paths) and keeps them as reports. An entry matches a report's
// path as a glob of GitLab's artifacts:paths (path.Match, or a directory
// prefix). The first error is a report GitLab would refuse.
func (s *Service) collectReports(ctx context.Context, jobID int64, reports map[string][]string) error {
	f, err := s.blobs.Open(ctx, artifactsKey(jobID))
	if err != nil {
		return nil // no archive: no report files
	}
	defer f.Close()
	zr, err := zip.NewReader(f, f.Size())
	if err != nil {
		return nil // not a zip: no report files
	}
	for kind, patterns := range reports {
		if !keptReport(kind) {
			continue
		}
		limit := s.reportLimit(kind)
		var members [][]byte
		left := limit
		for _, f := range zr.File {
			if !f.Mode().IsRegular() || !matchesAny(f.Name, patterns) {
				continue
			}
			if len(members) == maxReportFiles {
				return errReportTooLarge
			}
			rc, err := f.Open()
			if err != nil {
				return err
			}
			b, err := io.ReadAll(io.LimitReader(rc, left+1))
			rc.Close()
			if err != nil {
				return err
			}
			if int64(len(b)) > left {
				if kind == reportDotenv {
					return errDotenvTooBig
				}
				return errReportTooLarge
			}
			left -= int64(len(b))
			members = append(members, b)
		}
		if len(members) == 0 {
			continue
		}
		if err := checkReport(kind, members); err != nil {
			return err
		}
		if err := s.writeReport(ctx, jobID, kind, members); err != nil {
			return err
		}
	}
	return nil
}

// matchesAny says whether an archive entry is one of a report's paths.
func matchesAny(name string, patterns []string) bool {
	for _, p := range patterns {
		p = path.Clean(strings.TrimPrefix(p, "./"))
		if ok, _ := path.Match(p, name); ok || strings.HasPrefix(name, p+"/") {
			return true
		}
	}
	return false
}

// withReportPaths is the archive spec's paths with the report files
// added (the shell executor archives what it is given; the host takes the
// reports out of the archive). Report paths already listed are not added
// twice.
func withReportPaths(a *pipeline.Artifacts) []string {
	paths := append([]string(nil), a.Paths...)
	seen := map[string]bool{}
	for _, p := range paths {
		seen[p] = true
	}
	for _, kind := range []string{reportDotenv, reportJUnit} {
		for _, p := range a.Reports[kind] {
			if !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	return paths
}

// dotenvVariables are the variables of the dotenv reports of the jobs
// whose artifacts j fetches (dependencies, or needs with artifacts), in
// the order of those jobs: a later job's key wins, as the later layer. A
// job with a dotenv report and no archive counts (a runner uploads the
// report alone), so this reads the pipeline's latest jobs rather than
// dependencyJobs, which are the jobs with an archive.
func (s *Service) dotenvVariables(ctx context.Context, j *Job, spec *pipeline.Job) ([]pipeline.Variable, error) {
	if len(spec.Dependencies) == 0 && !spec.DependsOnAllEarlier {
		return nil, nil
	}
	fetcher := *spec
	fetcher.StageIndex = j.StageIdx
	var from []int64
	err := s.db.View(ctx, func(tx *store.Tx) error {
		list, err := latestJobs(tx, j.PipelineID)
		for _, d := range list {
			if d.ID != j.ID && fetcher.FetchesFrom(d.Name, d.StageIdx) {
				from = append(from, d.ID)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []pipeline.Variable
	for _, id := range from {
		members, err := s.readReport(ctx, reportKey(id, reportDotenv), maxDotenvBytes)
		if err != nil || members == nil {
			continue // none, or refused when it was stored
		}
		vars, err := parseDotenv(bytes.Join(members, nil))
		if err != nil {
			continue
		}
		for _, v := range vars {
			out = append(out, pipeline.Variable{Key: v.Key, Value: v.Value, Public: true})
		}
	}
	return out, nil
}

// hasKeptReports says whether an artifacts keyword has a report Fennec
// collects.
func hasKeptReports(a *pipeline.Artifacts) bool {
	return len(a.Reports[reportJUnit]) > 0 || len(a.Reports[reportDotenv]) > 0
}

// runnerReports are the entries of a runner's payload for the reports
// Fennec keeps, as GitLab sends them: one per type, gzip, uploaded
// whatever the job's result.
func runnerReports(a *pipeline.Artifacts) []runnerArtifacts {
	var out []runnerArtifacts
	for _, r := range []struct{ kind, name string }{{reportJUnit, "junit.xml.gz"}, {reportDotenv, ".env.gz"}} {
		if paths := a.Reports[r.kind]; len(paths) > 0 {
			out = append(out, runnerArtifacts{Name: r.name, Paths: paths, Exclude: []string{}, When: pipeline.ArtifactsAlways,
				ArtifactType: r.kind, ArtifactFormat: "gzip", ExpireIn: a.ExpireIn})
		}
	}
	return out
}

// storeReportUpload keeps a report a runner uploaded (gzip members),
// inflated within the type's bound: an error is the message of GitLab's
// 400 answer.
func (s *Service) storeReportUpload(ctx context.Context, jobID int64, kind string, u *upload) error {
	f, err := os.Open(u.path)
	if err != nil {
		return err
	}
	defer f.Close()
	members, err := inflateMembers(f, s.reportLimit(kind))
	if errors.Is(err, errReportTooLarge) && kind == reportDotenv {
		return errDotenvTooBig
	}
	if err != nil {
		return fmt.Errorf("invalid %s report: %w", kind, err)
	}
	if err := checkReport(kind, members); err != nil {
		return err
	}
	return s.writeReport(ctx, jobID, kind, members)
}

// removeReports removes a job's reports (erased, or expired with its
// archive).
func (s *Service) removeReports(ctx context.Context, jobID int64) {
	for _, kind := range []string{reportJUnit, reportDotenv} {
		_ = s.blobs.Delete(ctx, reportKey(jobID, kind))
	}
}

// archiveWanted says whether a job that ended with status keeps the
// archive of its artifacts keyword: it has paths, and its when matches.
func archiveWanted(a *pipeline.Artifacts, status string) bool {
	if len(a.Paths) == 0 && !a.Untracked {
		return false
	}
	switch a.When {
	case pipeline.ArtifactsAlways:
		return true
	case pipeline.ArtifactsOnFailure:
		return status == StatusFailed
	default:
		return status == StatusSuccess
	}
}
