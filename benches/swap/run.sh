#!/usr/bin/env bash
# Request latency while the server reloads a big snapshot:
# serves bench-data/m1 (generate it first: followgraph generate --accounts
# 1000000 --out bench-data/m1), runs wrk for 20 s as a baseline, then sends
# SIGHUP and runs wrk for 75 s across the reload, sampling RSS.
# Usage: benches/swap/run.sh   (from the repository root; needs wrk)
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v wrk >/dev/null || { echo "needs wrk: apt-get install -y wrk" >&2; exit 1; }
cargo build --release -q
port=18084
RUST_LOG=info ./target/release/followgraph serve --snapshot bench-data/m1 \
  --listen 127.0.0.1:$port > /tmp/followgraph-swap.log 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
until curl -sf http://127.0.0.1:$port/ready >/dev/null; do sleep 2; done
echo "RSS after the first load: $(ps -o rss= -p $server) KiB"
echo "== baseline, 20 s"
wrk -t2 -c16 -d20s --latency -s benches/swap/mix.lua http://127.0.0.1:$port |
  grep -E "Latency|50%|90%|99%|Requests/sec|requests in"
(while kill -0 $server 2>/dev/null; do ps -o rss= -p $server; sleep 0.5; done > /tmp/followgraph-swap.rss) &
kill -HUP $server
echo "== across the reload, 75 s"
wrk -t2 -c16 -d75s --latency -s benches/swap/mix.lua http://127.0.0.1:$port |
  grep -E "Latency|50%|90%|99%|Requests/sec|requests in"
grep -a "snapshot loaded" /tmp/followgraph-swap.log | sed 's/\x1b\[[0-9;]*m//g'
echo "peak RSS during the reload: $(sort -n /tmp/followgraph-swap.rss | tail -1) KiB"
