#!/usr/bin/env bash
# Sizing: what one server needs for one snapshot, as docs/operations.md
# ("Sizing") quotes it. Serves SNAPSHOT with the release binary and reads
# /proc/PID/status: spawn to /ready and VmRSS once ready (steady); then,
# with the peak reset (`5 > clear_refs`), each of RELOADS SIGHUP reloads
# of the same snapshot: SIGHUP to the next generation, VmHWM over the
# reload (its peak) and VmRSS after it. Prints one line per figure and
# the snapshot's list_records rows, so the figures scale per row.
# Usage: benches/sizing.sh SNAPSHOT_DIR [RELOADS]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
snap=$(realpath "$1")
reloads=${2:-3}
bin=${CARGO_TARGET_DIR:-target}/release/followgraph
cargo build --release --quiet
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; rm -rf "$work"' EXIT
kib() { awk -v k="$1" '$1 == k":" {print $2}' "/proc/$pid/status"; }
mib() { echo $(( $1 / 1024 )); }
generation() { curl -s "http://127.0.0.1:$port/snapshot" | python3 -c 'import json,sys; print(json.load(sys.stdin)["generation"])'; }

rows=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["tables"]["list_records"]["rows"])' "$snap/manifest.json")
echo "snapshot $(basename "$snap"): list_records $rows rows, files $(du -sh "$snap" | cut -f1)"
started=$(date +%s.%N)
"$bin" serve --snapshot "$snap" --listen 127.0.0.1:0 --poll-interval 0 --cache-ttl 0 \
  > "$work/out" 2> "$work/err" &
pid=$!
until port=$(grep -o '127.0.0.1:[0-9]*' "$work/out" 2>/dev/null | cut -d: -f2) && [ -n "$port" ]; do
  kill -0 $pid 2>/dev/null || { cat "$work/err"; exit 1; }
  sleep 0.05
done
until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/ready")" = 200 ]; do
  kill -0 $pid 2>/dev/null || { cat "$work/err"; exit 1; }
  sleep 0.1
done
ready=$(echo "$(date +%s.%N) - $started" | bc)
sleep 2
steady=$(kib VmRSS)
printf "first load: ready in %.1f s, peak %d MiB; steady %d MiB (%.1f B per list_records row)\n" \
  "$ready" "$(mib "$(kib VmHWM)")" "$(mib "$steady")" "$(echo "$steady * 1024 / $rows" | bc -l)"
for i in $(seq 1 "$reloads"); do
  before=$(generation)
  echo 5 > "/proc/$pid/clear_refs"
  t0=$(date +%s.%N)
  kill -HUP $pid
  until [ "$(generation)" != "$before" ]; do sleep 0.05; done
  took=$(echo "$(date +%s.%N) - $t0" | bc)
  sleep 2
  peak=$(kib VmHWM) after=$(kib VmRSS)
  printf "reload %d: live in %.1f s, peak %d MiB (%.2fx steady, %.1f B per row), after %d MiB\n" \
    "$i" "$took" "$(mib "$peak")" "$(echo "$peak / $steady" | bc -l)" \
    "$(echo "$peak * 1024 / $rows" | bc -l)" "$(mib "$after")"
done
