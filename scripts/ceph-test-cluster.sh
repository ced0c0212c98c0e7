#!/usr/bin/env bash
# A throw-away single-node Ceph cluster for tests: one monitor and one OSD (BlueStore on a sparse file), on
# 127.0.0.1, cephx on, no manager, everything (config, keyrings, data, logs, sockets, pid files) in one folder.
# Debian 12's ceph 16.2 packages (ceph-mon, ceph-osd, ceph-common: scripts/setup.sh installs them). The steps are
# those of a manual deployment (docs/references.md: Ceph manual deployment), cut to one node.
#
#   scripts/ceph-test-cluster.sh start  [DIR]   # bootstrap (or find running) and print what clients need
#   scripts/ceph-test-cluster.sh status [DIR]   # exit 0 if both daemons run and the cluster answers
#   scripts/ceph-test-cluster.sh stop   [DIR]   # kill the daemons and delete DIR
#
# DIR defaults to $NVMF_CEPH_DIR or /tmp/nvmf-ceph. start is idempotent: a healthy cluster in DIR is reused; a dead
# or half-built one is removed and built again. On success start prints, one per line (and writes DIR/env):
#   CEPH_CONF=DIR/ceph.conf  CEPH_MON=127.0.0.1:PORT  CEPH_POOL=rbd
#   CEPH_ADMIN_KEYRING=...   (client.admin: all caps)
#   CEPH_CLIENT_ID=nvmf  CEPH_CLIENT_KEYRING=...   (client.nvmf: mon 'profile rbd', osd 'profile rbd pool=rbd')
#   CEPH_RO_CLIENT_ID=nvmf-ro  CEPH_RO_CLIENT_KEYRING=...   (osd 'profile rbd-read-only pool=rbd')
# Keys are written to keyring files (mode 0600) and never printed.
#
# Environment: NVMF_CEPH_PORT (monitor port; default the first free one from 33000), NVMF_CEPH_OSD_BYTES (size of
# the OSD's block file, sparse; default 4 GiB), NVMF_CEPH_OWNER_PID (start only: a watchdog stops the cluster
# when that process is gone, so a killed test JVM leaves nothing running), NVMF_CEPH_TIMEOUT (seconds a start
# step may wait for the cluster; default 90), NVMF_CEPH_KEEP_LOGS (stop only: copy DIR/log to
# $NVMF_CEPH_KEEP_LOGS/NAME-HHMMSS before DIR is deleted, to read a failed test's monitor and OSD logs).
#
# Memory: the OSD runs with a fixed 32 MiB BlueStore cache and osd_memory_target 512 MiB (the autotuner off); see
# docs/rbd.md for what the two daemons use.
set -euo pipefail

cmd=${1:-}
DIR=${2:-${NVMF_CEPH_DIR:-/tmp/nvmf-ceph}}
TIMEOUT=${NVMF_CEPH_TIMEOUT:-90}
POOL=rbd
CONF=$DIR/ceph.conf

log() { echo "ceph-test-cluster: $*" >&2; }
die() { log "$*"; [ -d "$DIR/log" ] && tail -n 20 "$DIR"/log/*.log >&2 2>/dev/null; exit 1; }

need_tools() {
  local t missing=""
  for t in ceph-mon ceph-osd ceph ceph-authtool monmaptool rados rbd ss; do
    command -v "$t" >/dev/null || missing="$missing $t"
  done
  if [ -n "$missing" ]; then
    log "missing:$missing (Debian: apt-get install --no-install-recommends ceph-mon ceph-osd ceph-common; or scripts/setup.sh)"
    exit 2
  fi
}

# ceph CLI against this cluster as client.admin; bounded so a dead monitor cannot hang us.
cephc() { timeout "$TIMEOUT" ceph -c "$CONF" --connect-timeout "$TIMEOUT" "$@"; }

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

daemons_alive() { pid_alive "$DIR/run/mon.a.pid" && pid_alive "$DIR/run/osd.0.pid"; }

status() {
  [ -f "$DIR/env" ] && daemons_alive || return 1
  # The monitor answers and the OSD is up.
  timeout 15 ceph -c "$CONF" --connect-timeout 10 osd stat 2>/dev/null | grep -q '1 up' || return 1
}

print_env() {
  cat "$DIR/env"
}

# SIGKILL at once: the cluster's data is thrown away, so a clean shutdown (seconds for the OSD) buys nothing.
# A SIGSTOPped daemon (a test freezing the OSD) dies of SIGKILL too.
stop_daemons() {
  local f p pids=""
  for f in "$DIR"/run/watchdog.pid "$DIR"/run/osd.0.pid "$DIR"/run/mon.a.pid; do
    if pid_alive "$f"; then
      p=$(cat "$f")
      pids="$pids $p"
      kill -9 "$p" 2>/dev/null || true
    fi
  done
  local i
  for p in $pids; do
    for i in $(seq 1 100); do
      kill -0 "$p" 2>/dev/null || break
      sleep 0.05
    done
  done
}

free_port() {
  local p=${NVMF_CEPH_PORT:-}
  if [ -n "$p" ]; then echo "$p"; return; fi
  for p in $(seq 33000 33999); do
    if [ -z "$(ss -Hltn "sport = :$p" 2>/dev/null)" ]; then echo "$p"; return; fi
  done
  die "no free port in 33000-33999"
}

write_conf() {
  local fsid=$1 port=$2
  cat >"$CONF" <<EOF
# Written by scripts/ceph-test-cluster.sh: a single-node test cluster, not for production.
[global]
fsid = $fsid
mon_host = v2:127.0.0.1:$port
auth_cluster_required = cephx
auth_service_required = cephx
auth_client_required = cephx
auth_allow_insecure_global_id_reclaim = false
ms_bind_ipv6 = false
ms_bind_msgr1 = false
run_dir = $DIR/run
admin_socket = $DIR/run/\$name.asok
pid_file = $DIR/run/\$name.pid
log_file = $DIR/log/\$name.log
mon_cluster_log_file = $DIR/log/cluster.log
# One OSD: pools of size 1, CRUSH chooses among OSDs, not hosts.
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
mon_allow_pool_size_one = true
mon_allow_pool_delete = true
mon_warn_on_pool_no_redundancy = false
mon_data_avail_warn = 2
mon_data_avail_crit = 1

[mon]
mon_data = $DIR/mon/\$id
keyring = $DIR/mon/\$id/keyring

[osd]
osd_data = $DIR/osd/\$id
keyring = $DIR/osd/\$id/keyring
osd_objectstore = bluestore
bluestore_block_create = true
bluestore_block_size = ${NVMF_CEPH_OSD_BYTES:-4294967296}
bluestore_block_db_create = false
bluestore_block_wal_create = false
bluestore_fsck_on_mkfs = false
bluestore_fsck_on_mount = false
# Small: a fixed 32 MiB cache, no autotuning toward the 4 GiB default target.
bluestore_cache_autotune = false
bluestore_cache_size = 33554432
osd_memory_target = 536870912
osd_memory_base = 268435456
osd_memory_cache_min = 33554432
# Fewer threads on a 2-core machine.
osd_op_num_shards = 1
osd_op_num_threads_per_shard = 2
ms_async_op_threads = 1
osd_max_object_name_len = 256
osd_max_object_namespace_len = 64

[client]
keyring = $DIR/ceph.client.admin.keyring
log_file = $DIR/log/client.\$pid.log
EOF
}

start() {
  need_tools
  if status; then
    print_env
    return 0
  fi
  if [ -e "$DIR" ]; then
    log "removing a stale or half-built cluster in $DIR"
    stop_daemons
    rm -rf "$DIR"
  fi
  local t0 fsid port osd_uuid osd_secret id
  t0=$(date +%s%N)
  mkdir -p "$DIR"/run "$DIR"/log "$DIR"/mon/a "$DIR"/osd/0
  chmod 700 "$DIR"
  fsid=$(cat /proc/sys/kernel/random/uuid)
  port=$(free_port)
  write_conf "$fsid" "$port"

  # Keys: the monitors' own, and client.admin (imported into the monitor's keyring so it exists at birth).
  ceph-authtool --create-keyring "$DIR/mon.keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-authtool --create-keyring "$DIR/ceph.client.admin.keyring" --gen-key -n client.admin \
    --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' >/dev/null
  ceph-authtool "$DIR/mon.keyring" --import-keyring "$DIR/ceph.client.admin.keyring" >/dev/null
  monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$port]" "$DIR/monmap" >/dev/null
  ceph-mon -c "$CONF" --mkfs -i a --monmap "$DIR/monmap" --keyring "$DIR/mon.keyring" >/dev/null 2>&1 \
    || die "ceph-mon --mkfs failed"
  ceph-mon -c "$CONF" -i a </dev/null >/dev/null 2>>"$DIR/log/mon.a.stderr" || die "ceph-mon did not start"

  # The OSD: registered with a fresh cephx secret, then BlueStore made on its block file.
  osd_uuid=$(cat /proc/sys/kernel/random/uuid)
  osd_secret=$(ceph-authtool --gen-print-key)
  ( umask 077; printf '{"cephx_secret": "%s"}\n' "$osd_secret" >"$DIR/osd/0/secret.json" )
  id=$(cephc osd new "$osd_uuid" -i "$DIR/osd/0/secret.json") || die "ceph osd new failed (monitor not answering?)"
  rm -f "$DIR/osd/0/secret.json"
  [ "$id" = 0 ] || die "expected osd id 0, got '$id'"
  ceph-authtool --create-keyring "$DIR/osd/0/keyring" --name osd.0 --add-key "$osd_secret" >/dev/null
  ceph-osd -c "$CONF" -i 0 --mkfs --osd-uuid "$osd_uuid" >/dev/null 2>&1 || die "ceph-osd --mkfs failed"
  ceph-osd -c "$CONF" -i 0 </dev/null >/dev/null 2>>"$DIR/log/osd.0.stderr" || die "ceph-osd did not start"

  # The RBD pool, and a least-privilege client for the target (what an operator would give it).
  cephc osd pool create "$POOL" 8 8 replicated >/dev/null 2>&1 || die "pool create failed"
  cephc osd pool application enable "$POOL" rbd >/dev/null 2>&1 || die "pool application enable failed"
  cephc auth get-or-create client.nvmf mon 'profile rbd' osd "profile rbd pool=$POOL" \
    -o "$DIR/ceph.client.nvmf.keyring" >/dev/null 2>&1 || die "auth get-or-create client.nvmf failed"
  cephc auth get-or-create client.nvmf-ro mon 'profile rbd' osd "profile rbd-read-only pool=$POOL" \
    -o "$DIR/ceph.client.nvmf-ro.keyring" >/dev/null 2>&1 || die "auth get-or-create client.nvmf-ro failed"
  chmod 600 "$DIR"/*.keyring "$DIR"/osd/0/keyring
  # Ready when an object can be written: the OSD is up and the pool's placement groups are active.
  echo probe >"$DIR/probe"
  timeout "$TIMEOUT" rados -c "$CONF" -p "$POOL" put nvmf-probe "$DIR/probe" \
    || die "the pool did not become writable within ${TIMEOUT}s"
  timeout "$TIMEOUT" rados -c "$CONF" -p "$POOL" rm nvmf-probe || true

  cat >"$DIR/env" <<EOF
CEPH_CONF=$CONF
CEPH_MON=127.0.0.1:$port
CEPH_POOL=$POOL
CEPH_ADMIN_KEYRING=$DIR/ceph.client.admin.keyring
CEPH_CLIENT_ID=nvmf
CEPH_CLIENT_KEYRING=$DIR/ceph.client.nvmf.keyring
CEPH_RO_CLIENT_ID=nvmf-ro
CEPH_RO_CLIENT_KEYRING=$DIR/ceph.client.nvmf-ro.keyring
EOF
  if [ -n "${NVMF_CEPH_OWNER_PID:-}" ]; then
    # A watchdog in its own session: when the owner (a test JVM) is gone, however it ended, stop the cluster.
    setsid bash -c 'echo $$ >"$1/run/watchdog.pid"; while kill -0 "$2" 2>/dev/null; do sleep 2; done;
      rm -f "$1/run/watchdog.pid"; exec "$3" stop "$1"' watchdog "$DIR" "$NVMF_CEPH_OWNER_PID" \
      "$(readlink -f "${BASH_SOURCE[0]}")" </dev/null >/dev/null 2>&1 &
  fi
  log "started in $(( ($(date +%s%N) - t0) / 1000000 )) ms: mon a at 127.0.0.1:$port, osd.0 on $DIR/osd/0/block"
  print_env
}

stop() {
  if [ -d "$DIR" ]; then
    [ -f "$CONF" ] || { log "$DIR holds no ceph.conf: not a test cluster, left alone"; exit 1; }
    stop_daemons
    if [ -n "${NVMF_CEPH_KEEP_LOGS:-}" ]; then
      mkdir -p "$NVMF_CEPH_KEEP_LOGS"
      cp -r "$DIR/log" "$NVMF_CEPH_KEEP_LOGS/$(basename "$DIR")-$(date +%H%M%S)" || true
    fi
    rm -rf "$DIR"
    log "stopped; $DIR removed"
  fi
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  status)
    if status; then echo "running"; print_env; else echo "not running"; exit 1; fi ;;
  *) echo "usage: $0 start|status|stop [DIR]" >&2; exit 2 ;;
esac
