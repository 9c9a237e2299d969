#!/usr/bin/env bash
# measure.sh — the Redis sizing and throughput figures of DEPLOY.md.
#
#   deploy/measure.sh [INSTANCES] [RUNS] [CONCURRENCY]     (defaults 3 1000 30)
#   CLUSTER=3 deploy/measure.sh …                          the same on a Redis Cluster of 3 primaries
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

# One server, or CLUSTER primaries (no replicas) joined into a cluster; the
# figures below add up every node's.
nodes=()
for n in $(seq 1 "${CLUSTER:-1}"); do
	p=$(freeport)
	mkdir -p "$tmp/redis-$n"
	extra=()
	[ -n "${CLUSTER:-}" ] && extra=(--cluster-enabled yes --cluster-config-file "$tmp/redis-$n/nodes.conf")
	redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp/redis-$n" --daemonize no "${extra[@]}" >"$tmp/redis-$n.log" 2>&1 &
	pids+=($!)
	nodes+=("$p")
done
for p in "${nodes[@]}"; do until redis-cli -p "$p" ping >/dev/null 2>&1; do sleep 0.1; done; done
if [ -n "${CLUSTER:-}" ]; then
	redis-cli --cluster create $(for p in "${nodes[@]}"; do printf '127.0.0.1:%s ' "$p"; done) --cluster-replicas 0 --cluster-yes >"$tmp/cluster.log"
	for p in "${nodes[@]}"; do until redis-cli -p "$p" cluster info | grep -q 'cluster_state:ok'; do sleep 0.1; done; done
	store="{kind: redis, cluster: [$(for p in "${nodes[@]}"; do printf '"127.0.0.1:%s", ' "$p"; done | sed 's/, $//')]}"
else
	store="{kind: redis, url: \"redis://127.0.0.1:${nodes[0]}/0\"}"
fi
usedmem() { for p in "${nodes[@]}"; do redis-cli -p "$p" info memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p'; done | awk '{ s += $1 } END { print s }'; }
base_mem=$(usedmem)

"$tmp/demo-agents" --listen 127.0.0.1:0 --delay -1ns >"$tmp/agents.out" 2>"$tmp/agents.log" &
pids+=($!)
until [ -s "$tmp/agents.out" ]; do sleep 0.1; done
streamer=$(grep -o '"streamer":{"url":"[^"]*"' "$tmp/agents.out" | sed 's/.*"url":"//; s/"$//')

cat >"$tmp/bridge.yaml" <<YAML
listen: 127.0.0.1:0
store: $store
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
rcpu() { for p in "${nodes[@]}"; do redis-cli -p "$p" info cpu; done | awk -F: '/^used_cpu_(user|sys):/ { s += $2 } END { print s }'; }
cpu0=$(rcpu)
start=$(date +%s.%N)
while read -r i k; do echo "$i ${urls[$k]}"; done <"$tmp/plan" | xargs -P "$CONC" -n 2 bash -c 'run_one "$0" "$1"'
end=$(date +%s.%N)
cpu1=$(rcpu)

mem=$(usedmem)
# Journal keys ("a2a-bridge:{N}:journal:<agent>\0<thread>", see
# tasks/store/redisstore) hold a NUL byte, which redis-cli
# prints escaped: count them inside Redis instead.
count='local c, k, n = "0", 0, 0
repeat
	local r = redis.call("SCAN", c, "MATCH", "a2a-bridge:*:journal:*", "COUNT", 1000)
	c = r[1]
	for _, key in ipairs(r[2]) do k = k + 1; n = n + redis.call("XLEN", key) end
until c == "0"
return k .. " " .. n'
read -r threads events < <(for p in "${nodes[@]}"; do redis-cli -p "$p" --no-raw eval "$count" 0 | tr -d '"'; done |
	awk '{ k += $1; n += $2 } END { print k, n }')
awk -v nodes="${#nodes[@]}" -v runs="$RUNS" -v inst="$INSTANCES" -v conc="$CONC" -v s="$start" -v e="$end" -v ev="$events" -v th="$threads" -v m="$mem" -v b="$base_mem" -v c0="$cpu0" -v c1="$cpu1" 'BEGIN {
	printf "instances %d, redis nodes %d, runs %d, concurrency %d\n", inst, nodes, runs, conc
	printf "wall %.2fs, %.0f runs/s, %.0f journaled events/s\n", e - s, runs / (e - s), ev / (e - s)
	printf "threads %d, journaled events %d (%.1f per run)\n", th, ev, ev / th
	printf "redis CPU %.2fs: %.0f µs per run, %.1f%% of one core\n", c1 - c0, (c1 - c0) * 1e6 / runs, (c1 - c0) * 100 / (e - s)
	printf "redis used_memory %.1f MiB over empty servers: %.0f bytes per thread, %.0f bytes per event\n", (m - b) / 1048576, (m - b) / th, (m - b) / ev
}'
