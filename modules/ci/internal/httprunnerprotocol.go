package internal

// The runner protocol over HTTP: what a real GitLab Runner calls
// (RUNNER-CONTRACT.md and GITLAB-FACTS section 11). It is a machine
// protocol authenticated by runner and job tokens, in bodies and headers a
// user's API call never carries (PRIVATE-TOKEN holds a runner's or a job's
// token), with raw trace bodies, chunked multipart uploads, and requests
// held open for long polling: raw handlers, not Huma operations. They
// decode, call the protocol (runnerprotocol.go) and answer exactly as
// runners expect, headers included (protocolError).

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/fennec-forge/fennec/core/api"
	"github.com/fennec-forge/fennec/modules/ci/cicd"
)

// maxRunnerJSON bounds the JSON bodies of the runner API (a job's state
// update carries no trace with today's runners).
const maxRunnerJSON = 1 << 20

func (s *Service) registerRunnerAPI(a *api.API) {
	p := api.Prefix
	a.Mount("runner-register", "POST "+p+"/runners", http.HandlerFunc(s.handleRegister))
	a.Mount("runner-verify", "POST "+p+"/runners/verify", http.HandlerFunc(s.handleVerify))
	a.Mount("runner-unregister", "DELETE "+p+"/runners", http.HandlerFunc(s.handleUnregister))
	a.Mount("runner-request-job", "POST "+p+"/jobs/request", http.HandlerFunc(s.handleRequestJob))
	a.Mount("runner-update-job", "PUT "+p+"/jobs/{job_id}", http.HandlerFunc(s.handleUpdateJob))
	a.Mount("runner-append-trace", "PATCH "+p+"/jobs/{job_id}/trace", http.HandlerFunc(s.handleTrace))
	a.Mount("runner-upload-artifacts", "POST "+p+"/jobs/{job_id}/artifacts", http.HandlerFunc(s.handleUploadArtifacts))
}

// flexTags is a tag_list: a JSON array or a comma-separated string.
type flexTags []string

func (t *flexTags) UnmarshalJSON(b []byte) error {
	var list []string
	if err := json.Unmarshal(b, &list); err == nil {
		*t = list
		return nil
	}
	var one string
	if err := json.Unmarshal(b, &one); err != nil {
		return errors.New("tag_list is invalid")
	}
	*t = strings.Split(one, ",")
	return nil
}

// flexBool is a boolean sent as true/false or "true"/"false".
type flexBool struct{ v *bool }

func (f *flexBool) UnmarshalJSON(b []byte) error {
	var v bool
	if err := json.Unmarshal(b, &v); err == nil {
		f.v = &v
		return nil
	}
	var str string
	if err := json.Unmarshal(b, &str); err == nil {
		if v, err := strconv.ParseBool(str); err == nil {
			f.v = &v
			return nil
		}
	}
	return errors.New("is invalid")
}

// readJSON decodes a JSON body (bounded); a urlencoded or multipart form is
// turned into the same object, strings only.
func readJSON(r *http.Request, v any) *api.Error {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/x-www-form-urlencoded" || ct == "multipart/form-data" {
		r.Body = http.MaxBytesReader(nil, r.Body, maxRunnerJSON)
		if err := r.ParseMultipartForm(maxRunnerJSON); err != nil && !errors.Is(err, http.ErrNotMultipart) {
			return api.BadRequest("400 Bad request")
		}
		obj := map[string]any{}
		for k, vs := range r.Form {
			key := strings.TrimSuffix(k, "[]")
			if strings.HasSuffix(k, "[]") {
				obj[key] = vs
			} else if len(vs) > 0 {
				obj[key] = vs[0]
			}
		}
		b, _ := json.Marshal(obj)
		if err := json.Unmarshal(b, v); err != nil {
			return &api.Error{Status: http.StatusBadRequest, Err: "parameters are invalid"}
		}
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRunnerJSON+1))
	if err != nil {
		return api.BadRequest("400 Bad request")
	}
	if len(body) > maxRunnerJSON {
		return api.TooLarge()
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return api.Invalid("body")
	}
	return nil
}

// readTokenBody decodes a runner call's body into in and makes sure of its
// token: *token (a field of in), else the first of headers that is set. It
// answers the error itself and returns false then.
func (s *Service) readTokenBody(w http.ResponseWriter, r *http.Request, in any, token *string, headers ...string) bool {
	if e := readJSON(r, in); e != nil {
		s.http.api.WriteError(w, e)
		return false
	}
	if *token == "" {
		*token = firstHeader(r, headers...)
	}
	if *token == "" {
		s.http.api.WriteError(w, api.Missing("token"))
		return false
	}
	return true
}

// protocolError answers a refusal of the runner protocol, with the headers
// a runner reads (Job-Status); what names the work for the log of an
// unexpected failure (a 500).
func (s *Service) protocolError(w http.ResponseWriter, what string, err error) {
	answer := func(e error) { s.http.api.WriteError(w, e) }
	var stopped *jobNotRunningError
	switch {
	case errors.As(err, &stopped):
		w.Header().Set("Job-Status", stopped.Status)
		answer(api.Forbidden("Job is not running"))
	case errors.Is(err, errRunnerForbidden):
		answer(api.Forbidden(""))
	case errors.Is(err, errRunnerJobNotFound):
		answer(api.NotFound(""))
	case errors.Is(err, errTraceMismatch):
		w.Header().Set("Job-Status", StatusRunning)
		answer(&api.Error{Status: http.StatusPreconditionFailed, Message: "412 Precondition Failed - trace validation failed"})
	case errors.Is(err, errArtifactsTooLarge):
		w.Header().Set("Connection", "close")
		answer(api.TooLarge())
	case errors.Is(err, errUploadCutShort):
		answer(api.BadRequest("400 Bad request - the upload was cut short"))
	case errors.Is(err, errInvalidExpireIn):
		answer(api.Invalid("expire_in"))
	case errors.Is(err, cicd.ErrRunnerDescriptionTooLong), errors.Is(err, cicd.ErrInvalidRunnerTags),
		errors.Is(err, cicd.ErrRunnerTagsNeeded), errors.Is(err, cicd.ErrMissing), errors.Is(err, cicd.ErrInvalidValue):
		// The runners API's answers (httprunners.go, httperrors.go).
		answer(err)
	default:
		s.log.Error(what, zap.Error(err))
		answer(api.Internal())
	}
}

type registerBody struct {
	Token       string     `json:"token"`
	Description string     `json:"description"`
	TagList     flexTags   `json:"tag_list"`
	RunUntagged flexBool   `json:"run_untagged"`
	Locked      flexBool   `json:"locked"`
	Active      flexBool   `json:"active"`
	Paused      flexBool   `json:"paused"`
	Info        runnerInfo `json:"info"`
}

func (s *Service) handleRegister(w http.ResponseWriter, r *http.Request) {
	var in registerBody
	if !s.readTokenBody(w, r, &in, &in.Token) {
		return
	}
	// Later runners (gitlab-runner 17) send paused instead of active;
	// given, it wins.
	active := in.Active.v
	if in.Paused.v != nil {
		active = new(bool)
		*active = !*in.Paused.v
	}
	runner, token, err := s.register(r.Context(), registration{Token: in.Token, Description: in.Description, Tags: in.TagList,
		RunUntagged: in.RunUntagged.v, Locked: in.Locked.v, Active: active, Info: in.Info})
	if err != nil {
		s.protocolError(w, "registering a runner", err)
		return
	}
	api.WriteJSON(w, http.StatusCreated, map[string]any{"id": runner.ID, "token": token})
}

type tokenBody struct {
	Token string `json:"token"`
}

func (s *Service) handleVerify(w http.ResponseWriter, r *http.Request) {
	var in tokenBody
	if !s.readTokenBody(w, r, &in, &in.Token) {
		return
	}
	if _, err := s.runnerByToken(r.Context(), in.Token); err != nil {
		s.protocolError(w, "verifying a runner", err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (s *Service) handleUnregister(w http.ResponseWriter, r *http.Request) {
	var in tokenBody
	if !s.readTokenBody(w, r, &in, &in.Token) {
		return
	}
	if err := s.unregister(r.Context(), in.Token); err != nil {
		s.protocolError(w, "unregistering a runner", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// requestBody is what POST /jobs/request reads; the runner's last_update
// is not among it, for every request wakes the scheduler (requestJob).
type requestBody struct {
	Token string      `json:"token"`
	Info  *runnerInfo `json:"info"`
}

// handleRequestJob is POST /jobs/request: a job for the runner now, or as
// soon as one it may run becomes pending, within the poll timeout (204).
func (s *Service) handleRequestJob(w http.ResponseWriter, r *http.Request) {
	var in requestBody
	if !s.readTokenBody(w, r, &in, &in.Token, "RUNNER-TOKEN", "PRIVATE-TOKEN") {
		return
	}
	offer, err := s.requestJob(r.Context(), in.Token, in.Info)
	switch {
	case errors.Is(err, errRunnerForbidden):
		s.protocolError(w, "", err)
	case err != nil && r.Context().Err() != nil:
		// The runner went: nobody to answer.
	case err != nil:
		s.protocolError(w, "authenticating a runner", err)
	case offer.Job == nil:
		w.Header().Set("X-GitLab-Last-Update", offer.LastUpdate)
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("X-GitLab-Last-Update", offer.LastUpdate)
		api.WriteJSON(w, http.StatusCreated, offer.Job)
	}
}

// jobToken is the job token of a runner's call: a header, else the
// token parameter.
func jobToken(r *http.Request, headers ...string) string {
	if v := firstHeader(r, headers...); v != "" {
		return v
	}
	return r.URL.Query().Get("token")
}

func firstHeader(r *http.Request, names ...string) string {
	for _, n := range names {
		if v := r.Header.Get(n); v != "" {
			return v
		}
	}
	return ""
}

// runnerJob authenticates a runner's call on a job: the job of the path,
// with the token the runner was given for it. It answers the error itself
// and returns nil then.
func (s *Service) runnerJob(w http.ResponseWriter, r *http.Request, token string) *Job {
	id, err := strconv.ParseUint(r.PathValue("job_id"), 10, 63)
	if err != nil {
		s.http.api.WriteError(w, api.NotFound(""))
		return nil
	}
	j, err := s.jobForRunner(r.Context(), int64(id), token)
	if err != nil {
		s.protocolError(w, "reading a job", err)
		return nil
	}
	return j
}

func (s *Service) traceInterval() string {
	return strconv.Itoa(int(s.cfg.RunnerTraceInterval / time.Second))
}

// parseContentRange reads "<start>-<end>" (a "bytes " prefix and a
// "/<total>" suffix allowed); only start matters.
func parseContentRange(v string) (int64, bool) {
	v = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), "bytes"))
	v, _, _ = strings.Cut(v, "/")
	startText, endText, ok := strings.Cut(strings.TrimSpace(v), "-")
	if !ok {
		return 0, false
	}
	start, err := strconv.ParseInt(startText, 10, 64)
	if err != nil || start < 0 {
		return 0, false
	}
	if end, err := strconv.ParseInt(endText, 10, 64); err != nil || end < start-1 {
		return 0, false
	}
	return start, true
}

// handleTrace is PATCH /jobs/:id/trace: the next bytes of the trace.
func (s *Service) handleTrace(w http.ResponseWriter, r *http.Request) {
	j := s.runnerJob(w, r, jobToken(r, "JOB-TOKEN", "PRIVATE-TOKEN"))
	if j == nil {
		return
	}
	if j.Status != StatusRunning && j.Status != StatusCanceled {
		s.protocolError(w, "", notRunning(j))
		return
	}
	cr := r.Header.Get("Content-Range")
	if cr == "" {
		s.http.api.WriteError(w, api.BadRequest("400 Missing header Content-Range"))
		return
	}
	start, ok := parseContentRange(cr)
	if !ok {
		s.http.api.WriteError(w, api.BadRequest("400 Invalid header Content-Range"))
		return
	}
	got, err := s.appendRunnerTrace(r.Context(), j, start, r.Body)
	if got.Status != "" {
		w.Header().Set("Job-Status", got.Status)
		w.Header().Set("X-GitLab-Trace-Update-Interval", s.traceInterval())
	}
	switch {
	case errors.Is(err, errTraceGap):
		w.Header().Set("Range", "0-"+strconv.FormatInt(got.Size, 10))
		s.http.api.WriteError(w, &api.Error{Status: http.StatusRequestedRangeNotSatisfiable, Message: "416 Range Not Satisfiable"})
	case err != nil:
		s.protocolError(w, "appending a trace", err)
	default:
		w.Header().Set("Range", "0-"+strconv.FormatInt(got.Size, 10))
		w.WriteHeader(http.StatusAccepted)
	}
}

type updateBody struct {
	Token         string `json:"token"`
	State         string `json:"state"`
	FailureReason string `json:"failure_reason"`
	ExitCode      *int   `json:"exit_code"`
	Checksum      string `json:"checksum"`
	Output        *struct {
		Checksum string `json:"checksum"`
		Bytesize *int64 `json:"bytesize"`
	} `json:"output"`
}

// report is the body as the protocol takes it: the trace's checksum of
// output (later runners) wins over the top-level one.
func (b updateBody) report() jobReport {
	out := jobReport{State: b.State, FailureReason: b.FailureReason, ExitCode: b.ExitCode, Checksum: b.Checksum}
	if b.Output != nil {
		if b.Output.Checksum != "" {
			out.Checksum = b.Output.Checksum
		}
		out.Bytesize = b.Output.Bytesize
	}
	return out
}

// handleUpdateJob is PUT /jobs/:id: a keep-alive (running) or the job's
// end (success, failed).
func (s *Service) handleUpdateJob(w http.ResponseWriter, r *http.Request) {
	var in updateBody
	if e := readJSON(r, &in); e != nil {
		s.http.api.WriteError(w, e)
		return
	}
	token := in.Token
	if token == "" {
		token = firstHeader(r, "JOB-TOKEN", "PRIVATE-TOKEN")
	}
	j := s.runnerJob(w, r, token)
	if j == nil {
		return
	}
	if err := checkReportState(in.State); err != nil {
		s.protocolError(w, "", err)
		return
	}
	w.Header().Set("X-GitLab-Trace-Update-Interval", s.traceInterval())
	status, err := s.reportJob(r.Context(), j, in.report())
	if err != nil {
		s.protocolError(w, "recording a job's report", err)
		return
	}
	w.Header().Set("Job-Status", status)
	w.WriteHeader(http.StatusOK)
}

// handleUploadArtifacts is POST /jobs/:id/artifacts: the job's archive as
// the multipart field "file", streamed (chunked) into the data directory.
func (s *Service) handleUploadArtifacts(w http.ResponseWriter, r *http.Request) {
	j := s.runnerJob(w, r, jobToken(r, "JOB-TOKEN"))
	if j == nil {
		return
	}
	ctx := r.Context()
	if err := s.startUpload(ctx, j); err != nil {
		s.protocolError(w, "", err)
		return
	}
	if r.ContentLength > s.cfg.MaxArtifactsBytes+64<<10 {
		s.protocolError(w, "", errArtifactsTooLarge)
		return
	}
	q := r.URL.Query()
	expireIn, artifactType := q.Get("expire_in"), q.Get("artifact_type")
	mr, err := r.MultipartReader()
	if err != nil {
		s.http.api.WriteError(w, api.BadRequest(`400 (Bad request) "file" not given`))
		return
	}
	var archive *upload
	defer func() { archive.Discard() }()
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.http.api.WriteError(w, api.BadRequest("400 Bad request - malformed multipart body"))
			return
		}
		switch part.FormName() {
		case "file":
			if archive != nil {
				break // one archive per upload
			}
			if archive, err = s.receiveArchive(part.FileName(), part); err != nil {
				s.protocolError(w, "storing artifacts", err)
				return
			}
		case "expire_in", "artifact_type":
			b, _ := io.ReadAll(io.LimitReader(part, 256))
			if part.FormName() == "expire_in" {
				expireIn = string(b)
			} else {
				artifactType = string(b)
			}
		}
		part.Close()
	}
	if archive == nil {
		s.http.api.WriteError(w, api.BadRequest(`400 (Bad request) "file" not given`))
		return
	}
	expireAt, err := s.artifactsExpiry(expireIn)
	if err != nil {
		s.protocolError(w, "", err)
		return
	}
	if artifactType != "" && artifactType != "archive" {
		// junit and dotenv reports are kept; other reports and metadata
		// of later GitLab versions are accepted, not kept.
		defer archive.Discard()
		if keptReport(artifactType) {
			if err := s.storeReportUpload(ctx, j.ID, artifactType, archive); err != nil {
				s.http.api.WriteError(w, api.BadRequest(err.Error()))
				return
			}
		}
		w.WriteHeader(http.StatusCreated)
		return
	}
	job, err := s.storeUpload(ctx, j, archive, expireAt)
	if err != nil {
		s.protocolError(w, "storing artifacts", err)
		return
	}
	api.WriteJSON(w, http.StatusCreated, s.jobView(ctx, job, true))
}
