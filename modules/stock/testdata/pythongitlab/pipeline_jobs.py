"""A script reads the jobs of the pipeline a pushed .gitlab-ci.yml made."""
from check import client, eq, until

gl = client()
project = gl.projects.create({"name": "built"})
project.files.create({"file_path": ".gitlab-ci.yml", "branch": "master",
                      "content": "test:\n  script: [\"true\"]\n", "commit_message": "ci"})
pipeline = until(lambda: project.pipelines.list(get_all=True), "a pipeline for the pushed .gitlab-ci.yml")[0]
# A small pipeline is stored with its jobs: once listed, its jobs are there.
jobs = project.jobs.list(get_all=True)
eq([j.name for j in jobs], ["test"], "jobs.list()")
job = project.jobs.get(jobs[0].id)
eq((job.pipeline["id"], job.pipeline["project_id"], job.pipeline["ref"]), (pipeline.id, project.id, "master"),
   "a job's pipeline carries project_id")

# A job's commit status carries its stage: ?stage= filters by it (it was
# parsed and ignored), and statuses posted through the API are "external".
commit = project.commits.get(pipeline.sha)
commit.statuses.create({"state": "success", "name": "lint/external"})
eq(sorted(s.name for s in commit.statuses.list(get_all=True)), ["lint/external", "test"], "statuses.list()")
eq([s.name for s in commit.statuses.list(stage="test", get_all=True)], ["test"], "statuses.list(stage='test')")
eq([s.name for s in commit.statuses.list(stage="external", get_all=True)], ["lint/external"], "statuses.list(stage='external')")
