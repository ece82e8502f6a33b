#!/usr/bin/env bash
# Lighthouse scores of Fennec's pages (issue 28): builds the binary, starts
# `fennec serve` on a fresh data directory, makes a public project with a
# README and a source file through the API, and runs Lighthouse (npm
# lighthouse@12.2.3, with Debian's chromium) on the project page and a
# blob page, printing the performance and accessibility scores.
#
#   make lighthouse            (or: scripts/lighthouse.sh)
#
# Needs: go, curl, jq, chromium, and `npm install -g lighthouse@12.2.3`.
set -euo pipefail
cd "$(dirname "$0")/.."

LIGHTHOUSE=${LIGHTHOUSE:-$(command -v lighthouse || echo "$(npm root -g)/lighthouse/cli/index.js")}
CHROME=${CHROME_PATH:-$(command -v chromium)}
PORT=${PORT:-18089}
for tool in curl jq "$CHROME"; do
  command -v "$tool" >/dev/null || { echo "lighthouse.sh: $tool is missing" >&2; exit 2; }
done
[ -e "$LIGHTHOUSE" ] || command -v "$LIGHTHOUSE" >/dev/null || {
  echo "lighthouse.sh: lighthouse is missing (npm install -g lighthouse@12.2.3)" >&2; exit 2; }

[ -n "${SKIP_BUILD:-}" ] || make -s build
data=$(mktemp -d)
out=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$data"' EXIT
password="lh-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
FENNEC_ROOT_PASSWORD=$password ./bin/fennec serve --data "$data" --listen "127.0.0.1:$PORT" \
  --ssh-listen 127.0.0.1:0 --external-url "http://127.0.0.1:$PORT" >"$out/fennec.log" 2>&1 &
pid=$!
base="http://127.0.0.1:$PORT"
for _ in $(seq 100); do curl -sf "$base/-/readiness" >/dev/null 2>&1 && break; sleep 0.1; done

token=$(curl -sf -X POST "$base/api/v4/session" -d login=root -d "password=$password" | jq -r .private_token)
api() { curl -sf -H "PRIVATE-TOKEN: $token" -H 'Content-Type: application/json' "$@"; }
id=$(api -X POST "$base/api/v4/projects" -d '{"name":"lighthouse","visibility":"public","description":"A project for Lighthouse"}' | jq -r .id)
readme='# Lighthouse\n\nA project to measure. See [the code](src/main.go).\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```go\nfunc main() {}\n```\n'
code=$(for i in $(seq 200); do printf 'func f%d(x int) int { return x + %d } // line %d\\n' "$i" "$i" "$i"; done)
api -X POST "$base/api/v4/projects/$id/repository/commits" -d "{\"branch\":\"master\",\"commit_message\":\"Start\",\"actions\":[
  {\"action\":\"create\",\"file_path\":\"README.md\",\"content\":\"$readme\"},
  {\"action\":\"create\",\"file_path\":\"src/main.go\",\"content\":\"package main\\n\\n$code\"}]}" >/dev/null

status=0
for page in "/root/lighthouse" "/root/lighthouse/-/blob/master/src/main.go"; do
  report="$out/$(echo "$page" | tr '/' '_').json"
  node_or_bin=()
  case "$LIGHTHOUSE" in *.js) node_or_bin=(node "$LIGHTHOUSE") ;; *) node_or_bin=("$LIGHTHOUSE") ;; esac
  CHROME_PATH=$CHROME "${node_or_bin[@]}" "$base$page" --quiet --output=json --output-path="$report" \
    --only-categories=performance,accessibility,best-practices \
    --chrome-flags="--headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage" || status=1
  jq -r --arg page "$page" '"\($page): performance \(.categories.performance.score*100|round), accessibility \(.categories.accessibility.score*100|round), best practices \(.categories["best-practices"].score*100|round)"' "$report"
  jq -r '.audits | to_entries[] | select(.value.score != null and .value.score < 0.9 and .value.scoreDisplayMode != "informative" and .value.scoreDisplayMode != "notApplicable") | "  below 0.9: \(.key) (\(.value.score))"' "$report"
done
echo "reports: $out"
exit $status
