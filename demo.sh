#!/usr/bin/env bash
# The one-command demo: builds the project (tests skipped) and runs two instances of the sample
# service in one JVM against one Redis (the one at localhost:6379 if it answers, else an embedded
# one), fires a burst of concurrent requests at both and prints whether the limit held.
# Exit status 0: it held; 1: it was exceeded; 2: some call failed; 3: the demo could not run.
# Arguments go to both instances, e.g. ./demo.sh --spring.data.redis.port=6380
set -euo pipefail
cd "$(dirname "$0")"

if ! command -v java >/dev/null 2>&1; then
  echo "The demo needs a JDK 17 or newer on the PATH." >&2
  exit 3
fi

echo "Building the sample app (tests skipped: run them with ./mvnw -B verify)..."
./mvnw -B -q -DskipTests -pl semaphore-sample-app -am package

jar=$(ls semaphore-sample-app/target/semaphore-sample-app-*.jar | head -n 1)
exec java -jar "$jar" --demo "$@"
