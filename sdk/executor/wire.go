package executor

import (
	"time"

	executorpb "github.com/fennec-forge/fennec/sdk/executor/proto"
)

// This file converts between the Go types and their wire form.

var failures = []struct {
	kind FailureKind
	wire executorpb.Failure
}{
	{FailureNone, executorpb.Failure_FAILURE_NONE},
	{FailureScript, executorpb.Failure_FAILURE_SCRIPT},
	{FailureTimeout, executorpb.Failure_FAILURE_TIMEOUT},
	{FailureCanceled, executorpb.Failure_FAILURE_CANCELED},
	{FailureSystem, executorpb.Failure_FAILURE_SYSTEM},
	{FailurePrepare, executorpb.Failure_FAILURE_PREPARE},
	{FailureDependency, executorpb.Failure_FAILURE_DEPENDENCY},
	{FailureTraceLimit, executorpb.Failure_FAILURE_TRACE_LIMIT},
	{FailureArtifactsLimit, executorpb.Failure_FAILURE_ARTIFACTS_LIMIT},
}

func failureToWire(k FailureKind) executorpb.Failure {
	for _, f := range failures {
		if f.kind == k {
			return f.wire
		}
	}
	return executorpb.Failure_FAILURE_SYSTEM // a kind this SDK does not know
}

func failureFromWire(w executorpb.Failure) FailureKind {
	for _, f := range failures {
		if f.wire == w {
			return f.kind
		}
	}
	return FailureSystem // a newer plugin's kind: still a failure
}

func ms(d time.Duration) int64     { return d.Milliseconds() }
func fromMS(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

func jobToWire(j Job) *executorpb.Job {
	w := &executorpb.Job{
		Id: j.ID, Token: j.Token, Name: j.Name, Stage: j.Stage,
		ProjectId: j.ProjectID, ProjectPath: j.ProjectPath,
		Git: &executorpb.Git{
			RepoUrl: j.Git.RepoURL, Ref: j.Git.Ref, Tag: j.Git.Tag, Sha: j.Git.SHA,
			BeforeSha: j.Git.BeforeSHA, Depth: int32(j.Git.Depth),
		},
		Image: j.Image, Services: j.Services, Cache: j.Cache,
		Tags: j.Tags, TimeoutMs: ms(j.Timeout),
		MaxTraceBytes: j.MaxTraceBytes, MaxArtifactsBytes: j.MaxArtifactsBytes,
	}
	for _, v := range j.Variables {
		w.Variables = append(w.Variables, &executorpb.Variable{Key: v.Key, Value: v.Value, Public: v.Public, Masked: v.Masked, File: v.File})
	}
	for _, s := range j.Steps {
		w.Steps = append(w.Steps, &executorpb.Step{Name: s.Name, Script: s.Script, TimeoutMs: ms(s.Timeout), When: string(s.When), AllowFailure: s.AllowFailure})
	}
	if a := j.Artifacts; a != nil {
		w.Artifacts = &executorpb.ArtifactsSpec{Name: a.Name, Paths: a.Paths, Untracked: a.Untracked, When: string(a.When), ExpireIn: a.ExpireIn}
	}
	for _, d := range j.Dependencies {
		w.Dependencies = append(w.Dependencies, &executorpb.Dependency{Id: d.ID, Name: d.Name, Url: d.URL, Token: d.Token})
	}
	return w
}

func jobFromWire(w *executorpb.Job) Job {
	g := w.GetGit()
	j := Job{
		ID: w.GetId(), Token: w.GetToken(), Name: w.GetName(), Stage: w.GetStage(),
		ProjectID: w.GetProjectId(), ProjectPath: w.GetProjectPath(),
		Git: Git{
			RepoURL: g.GetRepoUrl(), Ref: g.GetRef(), Tag: g.GetTag(), SHA: g.GetSha(),
			BeforeSHA: g.GetBeforeSha(), Depth: int(g.GetDepth()),
		},
		Image: w.GetImage(), Services: w.GetServices(), Cache: w.GetCache(),
		Tags: w.GetTags(), Timeout: fromMS(w.GetTimeoutMs()),
		MaxTraceBytes: w.GetMaxTraceBytes(), MaxArtifactsBytes: w.GetMaxArtifactsBytes(),
	}
	for _, v := range w.GetVariables() {
		j.Variables = append(j.Variables, Variable{Key: v.GetKey(), Value: v.GetValue(), Public: v.GetPublic(), Masked: v.GetMasked(), File: v.GetFile()})
	}
	for _, s := range w.GetSteps() {
		j.Steps = append(j.Steps, Step{Name: s.GetName(), Script: s.GetScript(), Timeout: fromMS(s.GetTimeoutMs()), When: When(s.GetWhen()), AllowFailure: s.GetAllowFailure()})
	}
	if a := w.GetArtifacts(); a != nil {
		j.Artifacts = &ArtifactsSpec{Name: a.GetName(), Paths: a.GetPaths(), Untracked: a.GetUntracked(), When: When(a.GetWhen()), ExpireIn: a.GetExpireIn()}
	}
	for _, d := range w.GetDependencies() {
		j.Dependencies = append(j.Dependencies, Dependency{ID: d.GetId(), Name: d.GetName(), URL: d.GetUrl(), Token: d.GetToken()})
	}
	return j
}

func resultToWire(r Result) *executorpb.RunResult {
	return &executorpb.RunResult{
		ExitCode: int32(r.ExitCode), Failure: failureToWire(r.Failure), Message: r.Message,
		ArtifactsFilename: r.Artifacts.Filename, ArtifactsSize: r.Artifacts.Size, ArtifactsExpireIn: r.Artifacts.ExpireIn,
	}
}

func resultFromWire(w *executorpb.RunResult) Result {
	return Result{
		ExitCode: int(w.GetExitCode()), Failure: failureFromWire(w.GetFailure()), Message: w.GetMessage(),
		Artifacts: ArtifactsArchive{Filename: w.GetArtifactsFilename(), Size: w.GetArtifactsSize(), ExpireIn: w.GetArtifactsExpireIn()},
	}
}
