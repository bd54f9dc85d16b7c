#!/usr/bin/env bash
# Two hosts, simulated: network namespaces "a" and "b" (and "c", a stranger)
# on one bridge, 10.77.N.1-3. Root only (it makes namespaces); elsewhere it
# says why and skips (exit 77).
#  1. `nnplug train --nnodes 2`, one rank on each host, equals one process's
#     run; meanwhile the stranger connects to rank 0's store without the
#     secret, and again with a wrong one: refused, logged with its address,
#     and nothing changes. The store is not reachable on another address of
#     rank 0's host.
#  2. A later run loses the link between the hosts mid-training: both ranks
#     end non-zero within their --timeout, naming the peer, and the last
#     checkpoint stays whole.
set -uo pipefail
nnplug=$1
if [ "$(id -u)" -ne 0 ]; then echo "skip: making network namespaces needs root"; exit 77; fi
if ! command -v ip >/dev/null; then echo "skip: no ip command (Debian: iproute2)"; exit 77; fi
tag=n$$
net=10.77.$(( $$ % 200 + 20 ))
sw=${tag}sw
cleanup() {
  for pid in $(ip netns pids "${tag}a" 2>/dev/null) $(ip netns pids "${tag}b" 2>/dev/null) \
             $(ip netns pids "${tag}c" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
  for ns in a b c sw; do ip netns del "${tag}$ns" 2>/dev/null; done
  rm -rf "$tmp"
}
tmp=$(mktemp -d)
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

if ! ip netns add "$sw" 2>"$tmp/err"; then echo "skip: cannot make a network namespace: $(cat "$tmp/err")"; exit 77; fi
ip -n "$sw" link add br0 type bridge && ip -n "$sw" link set br0 up || fail "no bridge"
i=0
for h in a b c; do
  i=$((i + 1))
  ip netns add "${tag}$h"
  ip link add "${tag}v$h" type veth peer name "${tag}p$h" || fail "no veth pair"
  ip link set "${tag}v$h" netns "${tag}$h"
  ip link set "${tag}p$h" netns "$sw"
  ip -n "$sw" link set "${tag}p$h" master br0 up
  ip -n "${tag}$h" addr add "$net.$i/24" dev "${tag}v$h"
  ip -n "${tag}$h" link set "${tag}v$h" up
  ip -n "${tag}$h" link set lo up
done
in_host() { local h=$1; shift; ip netns exec "${tag}$h" "$@"; }

export NNP_JOB_TOKEN=two-hosts-test-secret-$RANDOM$RANDOM
node() {  # node RANK OUT EPOCHS [extra train args]: one machine's launch of one rank
  local r=$1 out=$2 epochs=$3; shift 3
  in_host "$( [ "$r" = 0 ] && echo a || echo b )" env -u GLOO_SOCKET_IFNAME "$nnplug" launch --nnodes 2 \
    --node-rank "$r" --nproc 1 --master-addr "$net.1" --master-port 29500 -- \
    "$nnplug" train --seed 3 --epochs "$epochs" --out "$tmp/$out" "$@"
}

# 1. The two-host run, a stranger in the middle of its rendezvous.
node 0 two 3 >"$tmp/a.log" 2>&1 &
host_a=$!
for _ in $(seq 100); do in_host a bash -c "exec 3<>/dev/tcp/$net.1/29500" 2>/dev/null && break; sleep 0.1; done
# Another address of rank 0's host (its loopback) answers nothing.
in_host a bash -c "exec 3<>/dev/tcp/127.0.0.1/29500" 2>/dev/null && fail "the store listens on loopback too"
# The stranger: a request to plant a key instead of a proof (its 80-byte
# value past the handshake's 64), then 64 bytes that are no proof.
in_host c bash -c "exec 3<>/dev/tcp/$net.1/29500; printf 'S\x05\0\0\0g0/x\x50\0\0\0\0\0\0\0' >&3; head -c 80 /dev/zero >&3; timeout 15 cat <&3 >/dev/null" \
  || fail "the stranger could not connect, or was not closed within 15 s"
in_host c bash -c "exec 3<>/dev/tcp/$net.1/29500; head -c 37 <&3 >/dev/null; head -c 64 /dev/zero >&3; timeout 15 cat <&3 >/dev/null" \
  || fail "a wrong proof was not closed within 15 s"
# A rank of another job (another secret) is refused too, and told so.
NNP_JOB_TOKEN=another-jobs-secret-0123456789 in_host c "$nnplug" launch --nnodes 2 --node-rank 1 --nproc 1 \
  --master-addr "$net.1" --master-port 29500 -- "$nnplug" train --epochs 1 --out "$tmp/stranger" \
  >"$tmp/c.log" 2>&1 && fail "a rank with another secret joined"
grep -q "NNP_JOB_TOKEN must be the same on every rank" "$tmp/c.log" || { cat "$tmp/c.log"; fail "the other job's rank was not told why"; }
node 1 two 3 >"$tmp/b.log" 2>&1 || { cat "$tmp/a.log" "$tmp/b.log"; fail "rank 1 on host b failed"; }
wait $host_a || { cat "$tmp/a.log"; fail "rank 0 on host a failed"; }
refusals=$(grep -c "refused a connection from $net.3:" "$tmp/a.log")
[ "$refusals" -ge 3 ] || { cat "$tmp/a.log"; fail "rank 0 logged $refusals refusals of the stranger at $net.3, not 3"; }
"$nnplug" train --seed 3 --epochs 3 --out "$tmp/one" >/dev/null 2>&1 || fail "train --seed 3 in one process"
paste -d, "$tmp/two/metrics.csv" "$tmp/one/metrics.csv" | awk -F, 'NR > 1 {
    for (i = 2; i <= 5; i++) { d = $i - $(i + 5); if (d < 0) d = -d; if (d > 1e-3) { print "column " i " epoch " $1 ": " $i " vs " $(i + 5); bad = 1 } } }
  END { exit bad }' || fail "two hosts' curves differ from one process's"
echo "ok   two hosts train as one process; the stranger was refused $refusals times and changed nothing"

# 2. The link between the hosts cut mid-training.
node 0 cut 200 --timeout 10 >"$tmp/a2.log" 2>&1 &
host_a=$!
node 1 cut 200 --timeout 10 >"$tmp/b2.log" 2>&1 &
host_b=$!
for _ in $(seq 600); do [ -s "$tmp/cut/checkpoint.safetensors" ] && break; sleep 0.1; done
[ -s "$tmp/cut/checkpoint.safetensors" ] || fail "no checkpoint after 60 s"
ip -n "$sw" link set "${tag}pb" down
cut=$SECONDS
wait $host_a; status_a=$?
wait $host_b; status_b=$?
took=$((SECONDS - cut))
[ $status_a -ne 0 ] && [ $status_b -ne 0 ] || { cat "$tmp/a2.log" "$tmp/b2.log"; fail "a rank ended with 0 after the link was cut ($status_a, $status_b)"; }
[ $took -le 30 ] || fail "the ranks took $took s to end after losing the link (--timeout 10)"
grep -qE "rank 1|$net\.2" "$tmp/a2.log" || { cat "$tmp/a2.log"; fail "rank 0 did not name its peer"; }
grep -qE "rank 0|$net\.1" "$tmp/b2.log" || { cat "$tmp/b2.log"; fail "rank 1 did not name its peer"; }
"$nnplug" eval --checkpoint "$tmp/cut/checkpoint.safetensors" >/dev/null || fail "the last checkpoint does not load"
echo "ok   a cut link ended both ranks in $took s (status $status_a and $status_b), naming the peer; the checkpoint is whole"
echo "2 passed, 0 failed"
