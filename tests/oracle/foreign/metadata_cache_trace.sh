#!/bin/sh
# A hicache-trace/1 trace of a simulated metadata cache, written without Python (POSIX sh and awk), as an
# implementation in another language would write one.  Usage:
#   metadata_cache_trace.sh correct|sliding [CALLS] [SEED] > trace.jsonl
# Three threads; each call's interval overlaps the calls of the two other threads around it, and the call
# takes effect in the middle of its interval.  "correct" keeps hard TTL (M3); "sliding" restarts a live
# key's life on re-add, the bug the last three calls make visible whatever the random part did.
mode=${1:?usage: metadata_cache_trace.sh correct|sliding [CALLS] [SEED]}
calls=${2:-300}
seed=${3:-7}
case $mode in correct|sliding) ;; *) echo "mode must be correct or sliding, got $mode" >&2; exit 2 ;; esac
exec awk -v mode="$mode" -v calls="$calls" -v seed="$seed" '
function emit(thread, op, k, invoke, width,    at, result) {
    at = invoke + width / 2
    if (op == "add") {
        if (!(k in born) || at - born[k] > ttl || mode == "sliding") born[k] = at
        result = "null"
    } else if (op == "contains") {
        result = ((k in born) && at - born[k] <= ttl) ? "true" : "false"
    } else {
        delete born[k]
        result = "null"
    }
    printf "{\"thread\": %d, \"op\": \"%s\", \"args\": [\"%s\"], \"invoke\": %.6f, \"return\": %.6f, \"result\": %s}\n", \
        thread, op, k, invoke, invoke + width, result
}
BEGIN {
    ttl = 0.05
    printf "{\"format\": \"hicache-trace/1\", \"component\": \"metadata-cache\", \"config\": {\"ttl_seconds\": %.2f, \"max_entries\": null}, \"writer\": \"awk\"}\n", ttl
    srand(seed)
    t = 100
    for (i = 0; i < calls; i++) {
        r = rand()
        op = r < 0.4 ? "add" : (r < 0.9 ? "contains" : "remove")
        emit(i % 3, op, "k" int(rand() * 4), t, 0.01)   # 0.004 s apart: each call overlaps the next two
        t += 0.004
    }
    t += 0.02
    emit(0, "add", "z", t, 0.01)
    emit(0, "add", "z", t + 0.03, 0.01)       # z is alive: hard TTL keeps its birth
    emit(0, "contains", "z", t + 0.065, 0.01) # 0.055 s or more after the first add: expired
}'
