"""Shared set-up of the python-gitlab scenarios that pythongitlab_test.go runs.

Each scenario is a script written the way a user's script is: it talks to the
server only through python-gitlab (Debian's python3-gitlab), and checks exact
results with eq(). The Go test passes the server's address and the
administrator's token in the environment and fails on a non-zero exit.
"""
import os
import sys
import time

import gitlab

URL = os.environ["FENNEC_URL"]
ROOT_TOKEN = os.environ["FENNEC_ROOT_TOKEN"]


def client(token=ROOT_TOKEN):
    """A python-gitlab client for token, as a script would make one."""
    return gitlab.Gitlab(URL, private_token=token, timeout=30, retry_transient_errors=False)


def eq(got, want, what):
    """Fails the scenario with both values when got != want."""
    if got != want:
        sys.stderr.write(f"FAIL {what}:\n  got  {got!r}\n  want {want!r}\n")
        sys.exit(1)
    print(f"ok   {what}")


def until(fn, what, timeout=30.0):
    """Polls fn until it returns something true (work done through the
    server's outbox, such as a pipeline for a push, lands a moment later)."""
    deadline = time.monotonic() + timeout
    while True:
        got = fn()
        if got:
            return got
        if time.monotonic() > deadline:
            sys.stderr.write(f"FAIL {what}: not within {timeout} s\n")
            sys.exit(1)
        time.sleep(0.05)


def raises(fn, code, what):
    """Fails unless fn raises a python-gitlab error with that HTTP status."""
    try:
        fn()
    except gitlab.exceptions.GitlabError as e:
        eq(e.response_code, code, what)
        return e
    sys.stderr.write(f"FAIL {what}: no error, want HTTP {code}\n")
    sys.exit(1)
