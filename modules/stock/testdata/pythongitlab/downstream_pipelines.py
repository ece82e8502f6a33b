"""A script follows a pipeline's trigger job to the child pipeline it made."""
from check import client, eq, until

gl = client()
project = gl.projects.create({"name": "parent"})
project.files.create({"file_path": "ci/child.yml", "branch": "master",
                      "content": "test:\n  script: [\"true\"]\n", "commit_message": "child"})
project.files.create({"file_path": ".gitlab-ci.yml", "branch": "master",
                      "content": "child:\n  trigger: {include: ci/child.yml}\n", "commit_message": "ci"})
sha = project.commits.get("master").id


def by_source(source):
    return [p for p in project.pipelines.list(get_all=True) if p.sha == sha and p.source == source]


parent = until(lambda: by_source("push"), "the push's pipeline")[0]
child = until(lambda: by_source("parent_pipeline"), "the child pipeline")[0]
bridges = until(lambda: [b for b in parent.bridges.list(get_all=True) if b.downstream_pipeline], "the bridge's child")
eq([(b.name, b.status) for b in bridges], [("child", "success")], "pipeline.bridges.list()")
down = bridges[0].downstream_pipeline
eq((down["id"], down["source"], down["sha"], down["ref"]), (child.id, "parent_pipeline", sha, "master"),
   "bridge.downstream_pipeline")
eq(project.pipelines.get(child.id).source, "parent_pipeline", "pipelines.get(child).source")
# The jobs lists leave trigger jobs out: the parent has none, the child its own.
eq([j.name for j in parent.jobs.list(get_all=True)], [], "parent.jobs.list()")
eq([j.name for j in project.pipelines.get(child.id).jobs.list(get_all=True)], ["test"], "child.jobs.list()")
