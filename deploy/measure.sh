#!/usr/bin/env bash
# measure.sh — the Redis sizing and throughput figures of DEPLOY.md.
#
#   deploy/measure.sh [INSTANCES] [RUNS] [CONCURRENCY]     (defaults 3 1000 30)
#
# Builds the bridge and the demo agents, starts a throwaway redis-server
# (no persistence) and INSTANCES bridge instances sharing it, posts RUNS
# runs of the demo "streamer" agent (a five-chunk streamed answer, each on
# a new thread) spread round-robin over the instances, CONCURRENCY at a
# time with curl, then reads Redis's INFO memory and the journals' lengths.
# It prints runs/s, events per run, and Redis memory per thread and per
# journaled event. Needs go, curl, redis-server and redis-cli.
set -euo pipefail
INSTANCES=${1:-3}
RUNS=${2:-1000}
CONC=${3:-30}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

go build -o "$tmp/" ./cmd/bridge ./examples/cmd/demo-agents

rport=$(freeport)
redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" --daemonize no >"$tmp/redis.log" 2>&1 &
pids+=($!)
until redis-cli -p "$rport" ping >/dev/null 2>&1; do sleep 0.1; done
base_mem=$(redis-cli -p "$rport" info memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p')

"$tmp/demo-agents" --listen 127.0.0.1:0 --delay -1ns >"$tmp/agents.out" 2>"$tmp/agents.log" &
pids+=($!)
until [ -s "$tmp/agents.out" ]; do sleep 0.1; done
streamer=$(grep -o '"streamer":{"url":"[^"]*"' "$tmp/agents.out" | sed 's/.*"url":"//; s/"$//')

cat >"$tmp/bridge.yaml" <<YAML
listen: 127.0.0.1:0
store: {kind: redis, url: "redis://127.0.0.1:$rport/0"}
log: {level: warn}
agents:
  - name: streamer
    url: "$streamer"
YAML
urls=()
for i in $(seq 1 "$INSTANCES"); do
	port=$(freeport)
	"$tmp/bridge" serve --config "$tmp/bridge.yaml" --listen "127.0.0.1:$port" 2>>"$tmp/bridge.log" &
	pids+=($!)
	urls+=("http://127.0.0.1:$port")
done
for u in "${urls[@]}"; do until curl -fs "$u/readyz" >/dev/null; do sleep 0.1; done; done

seq 1 "$RUNS" | awk -v n="$INSTANCES" '{ print $1, ($1 % n) }' >"$tmp/plan"
run_one() {
	local i=$1 u=$2
	curl -fsN "$u/agents/streamer" -H 'Content-Type: application/json' \
		-d "{\"threadId\":\"t$i\",\"runId\":\"r1\",\"protocolVersion\":\"1.0\",\"messages\":[{\"id\":\"m1\",\"role\":\"user\",\"content\":\"measure the store please\"}]}" |
		grep -c '"type":"RUN_FINISHED"' >/dev/null
}
export -f run_one
rcpu() { redis-cli -p "$rport" info cpu | awk -F: '/^used_cpu_(user|sys):/ { s += $2 } END { print s }'; }
cpu0=$(rcpu)
start=$(date +%s.%N)
while read -r i k; do echo "$i ${urls[$k]}"; done <"$tmp/plan" | xargs -P "$CONC" -n 2 bash -c 'run_one "$0" "$1"'
end=$(date +%s.%N)
cpu1=$(rcpu)

mem=$(redis-cli -p "$rport" info memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p')
# Journal keys hold a NUL byte (see tasks/redisstore.go), which redis-cli
# prints escaped: count them inside Redis instead.
read -r threads events < <(redis-cli -p "$rport" --no-raw eval "local c, k, n = '0', 0, 0
repeat
	local r = redis.call('SCAN', c, 'MATCH', 'a2a-bridge:*:journal', 'COUNT', 1000)
	c = r[1]
	for _, key in ipairs(r[2]) do k = k + 1; n = n + redis.call('XLEN', key) end
until c == '0'
return k .. ' ' .. n" 0 | tr -d '"')
awk -v runs="$RUNS" -v inst="$INSTANCES" -v conc="$CONC" -v s="$start" -v e="$end" -v ev="$events" -v th="$threads" -v m="$mem" -v b="$base_mem" -v c0="$cpu0" -v c1="$cpu1" 'BEGIN {
	printf "instances %d, runs %d, concurrency %d\n", inst, runs, conc
	printf "wall %.2fs, %.0f runs/s, %.0f journaled events/s\n", e - s, runs / (e - s), ev / (e - s)
	printf "threads %d, journaled events %d (%.1f per run)\n", th, ev, ev / th
	printf "redis CPU %.2fs: %.0f µs per run, %.1f%% of one core\n", c1 - c0, (c1 - c0) * 1e6 / runs, (c1 - c0) * 100 / (e - s)
	printf "redis used_memory %.1f MiB over an empty server: %.0f bytes per thread, %.0f bytes per event\n", (m - b) / 1048576, (m - b) / th, (m - b) / ev
}'
