#!/usr/bin/env bash
# The one-command demo: builds the project (tests skipped) and runs two instances of the sample
# service in one JVM against one Redis (the one at localhost:6379 if it answers, else an embedded
# one), fires a burst of concurrent requests at both and prints whether the limit held.
# Exit status 0: it held; 1: it was exceeded; 2: some call failed; 3: the demo could not run.
#   --keep-running  keeps both instances up after the table and prints their live view's URLs
#                   (a page at / of each); Ctrl-C stops them.
# Other arguments go to both instances, e.g. ./demo.sh --spring.data.redis.port=6380
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v java >/dev/null 2>&1; then
  echo "The demo needs a JDK 17 or newer on the PATH." >&2
  exit 3
fi

# Maven's own output is long; show its progress instead, a line at least every few seconds: the
# module being built, and how many files it downloaded (a first run fetches Maven itself and about
# 220 MB of dependencies from Maven Central). The whole log is kept for when the build fails.
build_log=$(mktemp "${TMPDIR:-/tmp}/semaphore-demo-build.XXXXXX")
trap 'rm -f "$build_log"' EXIT

show_build_progress() {
  local started=$SECONDS said=$SECONDS downloads=0 downloading="" line status
  while :; do
    if IFS= read -r -t 1 line; then
      printf '%s\n' "$line" >>"$build_log"
      case "$line" in
        *"Downloaded from "*)
          downloads=$((downloads + 1))
          downloading=${line%% (*} # the URL, without "(12 kB at 50 kB/s)"
          downloading=${downloading##*/} ;;
        "[INFO] Building "*" ["*"]"|"[INFO] Building "*)
          [[ "$line" == *".jar"* ]] && continue
          printf '  %3ds  %s\n' $((SECONDS - started)) "${line#\[INFO\] }"; said=$SECONDS ;;
      esac
    else
      status=$?
      ((status > 128)) || break # end of Maven's output; otherwise a second without a line
    fi
    if ((SECONDS - said >= 3)); then
      if ((downloads > 0)); then
        printf '  %3ds  downloaded %d files so far (last: %s)\n' $((SECONDS - started)) "$downloads" \
          "$downloading"
      else
        printf '  %3ds  building...\n' $((SECONDS - started))
      fi
      said=$SECONDS
    fi
  done
}

echo "Building the sample app (tests skipped: run them with ./mvnw -B verify)..."
if [[ ! -d "${MAVEN_USER_HOME:-$HOME/.m2}/repository/org/springframework/boot/spring-boot" ]]; then
  echo "  First run on this machine: Maven and the dependencies (about 230 MB) come from Maven Central."
fi
set +e
./mvnw -B -DskipTests -pl semaphore-sample-app -am package 2>&1 | show_build_progress
build_status=${PIPESTATUS[0]}
set -e
if ((build_status != 0)); then
  echo "The build failed; Maven's output:" >&2
  grep -E '^\[(ERROR|WARNING)\]' "$build_log" >&2 || cat "$build_log" >&2
  exit 3
fi
echo "Built."

jar=$(ls semaphore-sample-app/target/semaphore-sample-app-*.jar | head -n 1)
exec java -jar "$jar" --demo "$@"
