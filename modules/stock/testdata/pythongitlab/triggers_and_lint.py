"""A script manages a pipeline trigger and runs a pipeline with it, lints CI
files, and reads one file of a job's artifacts (the job run by the script
itself acting as a GitLab Runner, through the runner API)."""
import io
import zipfile

import requests

from check import URL, client, eq, raises, until

CI = """build:
  script: ["echo built"]
  artifacts:
    paths: [out/]
deploy:
  only: [triggers]
  script: ["echo deploying $DEPLOY"]
"""

gl = client()
project = gl.projects.create({"name": "triggered"})
project.files.create({"file_path": ".gitlab-ci.yml", "branch": "master", "content": CI, "commit_message": "ci"})
until(lambda: project.pipelines.list(get_all=True), "the pushed commit's pipeline")

# Triggers: create, list, edit, run.
trigger = project.triggers.create({"description": "deploy"})
eq((trigger.description, len(trigger.token), trigger.owner["username"], trigger.last_used),
   ("deploy", 30, "root", None), "triggers.create()")
eq([t.id for t in project.triggers.list(get_all=True)], [trigger.id], "triggers.list()")
trigger.description = "deploy to production"
trigger.save()
eq(project.triggers.get(trigger.id).description, "deploy to production", "trigger.save()")

pipeline = project.trigger_pipeline("master", trigger.token, variables={"DEPLOY": "prod1"})
eq((pipeline.ref, pipeline.user["username"]), ("master", "root"), "trigger_pipeline() runs as the trigger's owner")
eq(sorted(j.name for j in project.pipelines.get(pipeline.id).jobs.list(get_all=True)), ["build", "deploy"],
   "a triggered pipeline has the only: [triggers] job")
eq(project.triggers.get(trigger.id).last_used is not None, True, "the trigger's last_used")
raises(lambda: project.trigger_pipeline("master", "0" * 30), 404, "trigger_pipeline() with an unknown token")
raises(lambda: project.trigger_pipeline("nothing", trigger.token), 400, "trigger_pipeline() of an unknown ref")

# Lint, as python-gitlab 3.12 offers it (deprecated gl.lint and ci_lint).
eq(gl.lint(CI), (True, []), "gl.lint() of a valid file")
eq(gl.lint("test: {script: x, foo: 1}\n"), (False, ["jobs:test config contains unknown keys: foo"]),
   "gl.lint() of an invalid file")
eq(gl.ci_lint.create({"content": "test:\n  script: x\n"}).status, "valid", "ci_lint.create()")

# A GitLab Runner takes a pending job, uploads its artifacts, ends it.
token = gl.projects.get(project.id).runners_token
runner = requests.post(URL + "/api/v4/runners", json={"token": token, "description": "script runner"}, timeout=30)
eq(runner.status_code, 201, "a runner registers with the project's runners_token")
got = requests.post(URL + "/api/v4/jobs/request", timeout=60,
                    json={"token": runner.json()["token"], "info": {"name": "script", "executor": "shell"}})
eq(got.status_code, 201, "the runner gets a job")
job_id, job_token = got.json()["id"], got.json()["token"]
archive = io.BytesIO()
with zipfile.ZipFile(archive, "w") as z:
    z.writestr("out/result.txt", "hello from the runner\n")
    z.writestr("out/sub/data.json", '{"a": 1}')
up = requests.post(f"{URL}/api/v4/jobs/{job_id}/artifacts?artifact_format=zip&artifact_type=archive",
                   headers={"JOB-TOKEN": job_token}, files={"file": ("artifacts.zip", archive.getvalue())}, timeout=30)
eq(up.status_code, 201, "the runner uploads the job's artifacts")
done = requests.put(f"{URL}/api/v4/jobs/{job_id}", json={"token": job_token, "state": "success"}, timeout=30)
eq(done.status_code, 200, "the runner ends the job")

job = project.jobs.get(job_id)
eq(job.status, "success", "the job's status")
eq(job.artifact("out/result.txt"), b"hello from the runner\n", "job.artifact()")
eq(job.artifact("out/sub/data.json"), b'{"a": 1}', "job.artifact() of a nested file")
raises(lambda: job.artifact("out/missing.txt"), 404, "job.artifact() of a file not in the archive")
eq(project.artifacts.raw(job.ref, "out/sub/data.json", job.name), b'{"a": 1}',
   "artifacts.raw() by ref and job name")

trigger.delete()
eq(project.triggers.list(get_all=True), [], "trigger.delete()")
raises(lambda: project.trigger_pipeline("master", trigger.token), 404, "a deleted trigger's token")
