#!/bin/bash
# The Linux host used as operators use it, against the daemon started as the unit starts it (bin/nvmf-target serve
# --config FILE), in one boot and with one daemon (each JVM start costs a minute under TCG):
#
#   import: the configuration nvmetcli saved (written here as `nvmetcli save` writes it: sorted keys, attributes as
#   strings) has nvmetcli's own subsystem name `testnqn` (a file namespace), blktests' `blktests-subsystem-1` (a
#   loop device), a third subsystem for another host only, and one RDMA port on the wildcard address 0.0.0.0:4420
#   with all three. `bin/nvmf-target import-nvmetcli` converts it (names kept, a warning for the names that do not
#   follow NVMe Base 4.5); the daemon serves the result unchanged, plus one subsystem of the daemon's own (a RAM, a
#   file on ext4 served O_DIRECT, a loop device with 4 KiB sectors and a 512e scsi_debug disk: 512-byte logical,
#   4 KiB physical blocks) on two more ports, 10.77.0.1:4421 and :4422;
#
#   discovery: port-local. `nvme discover` through the wildcard port as host1 lists the two subsystems host1 may
#   reach there, at the address it reached (10.77.0.1, never 0.0.0.0), and not the daemon's own subsystem (on other
#   ports); through 4421 and 4422 it lists that port's entry only. A persistent discovery controller on the wildcard
#   port: its Identify (MDTS) and its raw Discovery Log Page (discovery-4420.bin, every field read by the JUnit test);
#
#   connect-all: `nvme connect-all` through the wildcard port attaches exactly those two subsystems, each at
#   10.77.0.1:4420, no discovery controller stays; testnqn shows the imported serial, model, firmware and a
#   controller id in the imported range, and a short fio crc32c verify passes; blktests-subsystem-1 reads;
#
#   identify, features and log pages of the daemon's own subsystem as nvme-cli shows them: `nvme id-ctrl -H`,
#   `nvme id-ns -H` on every namespace, `nvme get-feature` for every mandatory feature (and Interrupt Coalescing,
#   which the code does not claim), Set Features Async Event Configuration with SPDK's 11Fh and with a reserved bit,
#   `nvme supported-log-pages` and the raw log page 00h, `nvme smart-log`; the host's own view (queue limits in
#   sysfs, the number of I/O queues it got);
#
#   a file system on the RAM, the file and the block namespace: `mkfs.ext4` with its discard (the whole namespace
#   deallocated), mount, a tree of files, a scratch file written and deleted, `fstrim` of the mount, unmount, `nvme
#   disconnect` (the host shuts the controller down: CC.SHN), reconnect, `fsck.ext4 -n -f` (clean), mount, every
#   file's SHA-256 as written. The daemon counts the discards (Dataset Management) and no I/O error; the host logs no
#   I/O timeout, controller reset, reconnect or I/O error; SIGTERM: exit 0, no QP or CM id left.
#
# Environment: NVMF_BUILD_DIR (bin/nvmf-target's build folder; default target; without a packaged build the main
# class runs from LAB_CLASSPATH).
# Results: see DaemonInteropLabTest (every key it reads is written here); the timings part_*_s, mkfs_s_KIND,
# fstrim_s_KIND (KIND ram, file, block), trimmed_bytes_KIND, interop_wall_s.
. "$LAB_REPO/tests/lab/guest/lib.sh"
set -u
T0=$(cut -d' ' -f1 /proc/uptime)
T_NQN=testnqn
B_NQN=blktests-subsystem-1
X_NQN=nqn.2024-01.dev.nvmf:lab-other-host
NQN=nqn.2024-01.dev.nvmf:lab-filesystem
HOST1=nqn.2014-08.org.nvmexpress:uuid:host1
HOST1_ID=5a0c1e7e-4b1d-4c55-9a6e-0a00000001c1
HOST2=hostnqn                    # nvmetcli's example host name; the only host allowed on X_NQN
DISCOVERY_NQN=nqn.2014-08.org.nvmexpress.discovery
WPORT=4420                       # the imported wildcard port
PORT=4421                        # the daemon's own subsystem: two ports on 10.77.0.1
PORT2=4422
METRICS=127.0.0.1:9464           # what import-nvmetcli writes
KATO=30                          # keep-alive timeout the host asks for (s); Get Features 0Fh must say it back
JSON=$LAB_RUN/nvmet-config.json
IMPORTED=$LAB_RUN/imported.yaml
CFG=$LAB_RUN/interop.yaml
SRV=$LAB_RUN/srv                 # an ext4 file system for the file namespaces (what /srv on a disk would be)
NS_MIB=128
MANIFESTS=$LAB_RUN/manifests
AS_HOST1=(-q "$HOST1" -I "$HOST1_ID")
mkdir -p "$LAB_RUN" "$LAB_LOGS" "$MANIFESTS"
DMESG_START=$(dmesg | wc -l)
part() { lab_result "part_${1}_s" "$(lab_elapsed "$PART_T0")"; PART_T0=$(cut -d' ' -f1 /proc/uptime); }
PART_T0=$T0

# --- the media -----------------------------------------------------------------------------------------------------
lab_scratch_fs "$SRV" 240 > /dev/null || lab_die "cannot make the ext4 file system for the file namespaces"
FILE_NS=$SRV/ns2.img
truncate -s "${NS_MIB}M" "$FILE_NS" && truncate -s 32M "$SRV/testnqn.img" && truncate -s 16M "$SRV/other.img" \
  || lab_die "cannot create the namespace files"
truncate -s 32M "$LAB_RUN/blktests-backing.img" && truncate -s "${NS_MIB}M" "$LAB_RUN/ns3-backing.img" \
  || lab_die "cannot create the loop devices' backing files"
B_LOOP=$(losetup -f --show "$LAB_RUN/blktests-backing.img") || lab_die "losetup"
LOOP=$(losetup -f --show --sector-size 4096 "$LAB_RUN/ns3-backing.img") || lab_die "losetup --sector-size 4096"
# 512e: 512-byte logical blocks on 4 KiB physical ones (physblk_exp=3). No udev in the guest loads sd_mod.
modprobe sd_mod || lab_die "modprobe sd_mod"
modprobe scsi_debug dev_size_mb=64 sector_size=512 physblk_exp=3 || lab_die "modprobe scsi_debug"
sd_dev() { local b; for b in /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*/block/*; do
  [ -e "$b" ] && [ -b "/dev/${b##*/}" ] && { echo "/dev/${b##*/}"; return 0; }; done; return 1; }
wait_for sd_dev 60 "the scsi_debug disk" || lab_die "no scsi_debug disk"
SD=$(sd_dev)
# What the target side's devices say about themselves (the daemon reads the same through ioctls and sysfs).
for spec in "block:$LOOP" "e512:$SD"; do
  kind=${spec%%:*}; q=/sys/block/$(basename "${spec#*:}")/queue
  lab_results "dev_${kind}_lbs=$(< "$q/logical_block_size")" "dev_${kind}_pbs=$(< "$q/physical_block_size")" \
    "dev_${kind}_io_opt=$(< "$q/optimal_io_size")" "dev_${kind}_dgran=$(< "$q/discard_granularity")"
done

# --- nvmetcli's saved configuration, imported ----------------------------------------------------------------------
# nvmet_subsys JSON fields: NQN ALLOW_ANY SERIAL CNTLID_MIN CNTLID_MAX PATH UUID-SUFFIX [ALLOWED_HOST]
nvmet_subsys() {
  local allowed='[]'
  [ -n "${8:-}" ] && allowed="[
        \"$8\"
      ]"
  cat <<JSON
    {
      "allowed_hosts": $allowed,
      "attr": {
        "allow_any_host": "$2",
        "cntlid_max": "$5",
        "cntlid_min": "$4",
        "firmware": "6.1.0-57",
        "ieee_oui": "0x000000",
        "model": "Linux",
        "pi_enable": "0",
        "qid_max": "128",
        "serial": "$3",
        "version": "1.3"
      },
      "namespaces": [
        {
          "ana_grpid": 1,
          "device": {
            "nguid": "00000000-0000-0000-0000-000000000000",
            "path": "$6",
            "uuid": "1d6b47f0-7f0a-4c1e-9a51-6a4b2f3c0b$7"
          },
          "enable": 1,
          "nsid": 1
        }
      ],
      "nqn": "$1"
    }
JSON
}
{
  cat <<JSON
{
  "hosts": [
    {
      "nqn": "$HOST1"
    },
    {
      "nqn": "$HOST2"
    }
  ],
  "ports": [
    {
      "addr": {
        "adrfam": "ipv4",
        "traddr": "0.0.0.0",
        "treq": "not specified",
        "trsvcid": "$WPORT",
        "trtype": "rdma"
      },
      "ana_groups": [
        {
          "ana": {
            "state": "optimized"
          },
          "grpid": 1
        }
      ],
      "param": {
        "inline_data_size": "8192",
        "pi_enable": "0"
      },
      "portid": 1,
      "referrals": [],
      "subsystems": [
        "$B_NQN",
        "$X_NQN",
        "$T_NQN"
      ]
    }
  ],
  "subsystems": [
JSON
  nvmet_subsys "$B_NQN" 1 4f3b2a1c0d9e8f70 1 65519 "$B_LOOP" 01; echo ","
  nvmet_subsys "$X_NQN" 0 0c9d8e7f6a5b4c3d 1 65519 "$SRV/other.img" 02 "$HOST2"; echo ","
  nvmet_subsys "$T_NQN" 0 a1b2c3d4e5f60718 16 32 "$SRV/testnqn.img" 03 "$HOST1"
  printf '  ]\n}\n'
} > "$JSON"
cp "$JSON" "$LAB_LOGS/nvmet-config.json"
/usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$JSON" || lab_die "the nvmetcli JSON is not JSON"

lab_nvmf_command || lab_die "no way to run nvmf-target"
run_step import-nvmetcli 240 "${LAB_NVMF[@]}" import-nvmetcli "$JSON" -o "$IMPORTED"
lab_result import_rc $?
[ -f "$IMPORTED" ] || lab_die "import-nvmetcli wrote no $IMPORTED"
cp "$IMPORTED" "$LAB_LOGS/imported.yaml"
grep -q "warning: .*'$T_NQN'" "$LAB_LOGS/import-nvmetcli.log" && lab_result import_warned_testnqn 1
kept=1
for n in "$T_NQN" "$B_NQN" "$X_NQN" "$HOST1" "$HOST2"; do
  grep -Eq "(nqn: |- |\[|, )$n(\$|,|\])" "$IMPORTED" || { lab_log "the imported YAML lost the name $n"; kept=0; }
done
lab_result import_kept_names "$kept"
grep -Eq "^  - nqn: $T_NQN\$" "$IMPORTED" && grep -Eq '^    traddr: 0\.0\.0\.0$' "$IMPORTED" && grep -q '^ports:$' "$IMPORTED" \
  && grep -q '^subsystems:$' "$IMPORTED" || lab_die "the imported YAML is not laid out as this scenario expects"

# The served configuration: the imported one as it is, with the daemon's own subsystem and its two ports put first
# into the imported lists (same indentation; the daemon refuses the file, naming line and key, if that went wrong).
cat > "$LAB_RUN/own-ports.yaml" <<YAML
  - id: 2
    traddr: $LAB_TARGET_ADDR
    trsvcid: $PORT
    subsystems: [$NQN]
  - id: 3
    traddr: $LAB_TARGET_ADDR
    trsvcid: $PORT2
    subsystems: [$NQN]
YAML
cat > "$LAB_RUN/own-subsystems.yaml" <<YAML
  - nqn: $NQN
    allow_any_host: true
    namespaces:
      - nsid: 1
        ram_size: ${NS_MIB}MiB
      - nsid: 2
        file: $FILE_NS
      - nsid: 3
        device: $LOOP
      - nsid: 4
        device: $SD
YAML
awk -v p="$LAB_RUN/own-ports.yaml" -v s="$LAB_RUN/own-subsystems.yaml" '
  { print }
  /^ports:$/ { while ((getline l < p) > 0) print l }
  /^subsystems:$/ { while ((getline l < s) > 0) print l }' "$IMPORTED" > "$CFG"
cp "$CFG" "$LAB_LOGS/interop.yaml"
part import

# --- serve ---------------------------------------------------------------------------------------------------------
start_bg daemon "${LAB_NVMF[@]}" serve --config "$CFG"
wait_for_log daemon ' ready: ' 240 || lab_die "the daemon did not become ready"
lab_result daemon_ready 1
# The file namespace on ext4 is served O_DIRECT (the daemon's description of it says "buffered" otherwise).
grep -q "namespace 2 added .*file:$FILE_NS, " "$LAB_LOGS/daemon.log" && lab_result file_direct 1
part serve

# --- discovery: port-local, the wildcard port listed at the address the host reached ------------------------------
discover() { # discover NAME PORT [host options]: nvme discover; entries as results disc_NAME_nvm, disc_NAME_current
  local name=$1 p=$2
  shift 2
  run_step "discover-$name" 60 nvme discover -t rdma -a "$LAB_TARGET_ADDR" -s "$p" -w "$LAB_HOST_ADDR" "$@" \
    || lab_die "nvme discover through port $p"
  nvme_discovery_entries "$LAB_LOGS/discover-$name.log" > "$LAB_LOGS/discover-$name.entries"
  lab_results "disc_${name}_nvm=$(awk -F'|' '$1 == "nvm" { print $2 "@" $3 ":" $4 "/" $5 }' \
      "$LAB_LOGS/discover-$name.entries" | sort | paste -sd,)" \
    "disc_${name}_current=$(awk -F'|' '$1 == "current" { print $2 "@" $3 ":" $4 }' "$LAB_LOGS/discover-$name.entries" \
      | paste -sd,)" \
    "disc_${name}_other=$(awk -F'|' '$1 != "nvm" && $1 != "current"' "$LAB_LOGS/discover-$name.entries" | wc -l)"
}
discover "$WPORT" "$WPORT" "${AS_HOST1[@]}"
discover "$PORT" "$PORT"
discover "$PORT2" "$PORT2"
# The words nvme-cli prints for the fields of the wildcard port's entries (the same for every entry of a kind).
lab_results "disc_words_current=$(awk -F'|' '$1 == "current" { print $6 "|" $7 "|" $8 "|" $9 "|" $10 "|" $11; exit }' \
    "$LAB_LOGS/discover-$WPORT.entries")" \
  "disc_words_nvm=$(awk -F'|' '$1 == "nvm" { print $6 "|" $7 "|" $8 "|" $9 "|" $10 "|" $11; exit }' \
    "$LAB_LOGS/discover-$WPORT.entries")"
disc_ctrl() { local c; for c in /sys/class/nvme/nvme*; do
  [ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$DISCOVERY_NQN" ] && { basename "$c"; return 0; }
  done; return 1; }
# A persistent discovery controller on the wildcard port (as host1): Identify, and the raw log page it serves.
run_step discover-persistent 60 nvme discover -p -t rdma -a "$LAB_TARGET_ADDR" -s "$WPORT" -w "$LAB_HOST_ADDR" \
  "${AS_HOST1[@]}" > /dev/null || lab_die "nvme discover -p"
wait_for disc_ctrl 30 "a persistent discovery controller" || lab_die "no persistent discovery controller"
DC=$(disc_ctrl)
run_step id-ctrl-discovery 30 nvme id-ctrl "/dev/$DC" -H > /dev/null || lab_die "id-ctrl of the discovery controller"
nvme_id_results "$LAB_LOGS/id-ctrl-discovery.log" disc_ctrl mdts cntrltype maxcmd subnqn
# Header and three entries (current discovery subsystem, blktests-subsystem-1, testnqn): 4 KiB.
timeout 30 nvme get-log "/dev/$DC" --log-id=0x70 --log-len=4096 -b > "$LAB_LOGS/discovery-$WPORT.bin" \
  2> "$LAB_LOGS/get-log-70.log"
lab_result disc_log_rc $?
run_step disconnect-discovery 30 nvme disconnect -d "$DC" > /dev/null
wait_for "! disc_ctrl" 30 "the discovery controller removed" || lab_die "the discovery controller is still there"
part discovery

# --- connect-all through the wildcard port --------------------------------------------------------------------------
# ours: "NQN|address|state" of every fabrics controller the host has now.
ours() { local c; for c in /sys/class/nvme/nvme*; do [ -e "$c/subsysnqn" ] || continue
  echo "$(< "$c/subsysnqn")|$(< "$c/address")|$(< "$c/state")"; done; }
run_step connect-all 180 nvme connect-all -t rdma -a "$LAB_TARGET_ADDR" -s "$WPORT" -w "$LAB_HOST_ADDR" \
  "${AS_HOST1[@]}" --ctrl-loss-tmo=10 --reconnect-delay=2
lab_result connect_all_rc $?
live=0 reads=0
for nqn in "$T_NQN" "$B_NQN"; do
  if nvme_ns_dev_for "$nqn" 60 > /dev/null; then
    live=$((live + 1))
    timeout 60 dd if="$(nvme_ns_dev "$nqn")" of=/dev/null bs=64k count=16 iflag=direct 2> "$LAB_LOGS/read-$nqn.log" \
      && reads=$((reads + 1))
  fi
done
wait_for "! disc_ctrl" 30 "connect-all's discovery controller removed"
ours | sort > "$LAB_LOGS/connect-all-controllers.txt"
cat "$LAB_LOGS/connect-all-controllers.txt" >&2
lab_results "connect_all_ctrls=$(cut -d'|' -f1,2 "$LAB_LOGS/connect-all-controllers.txt" | tr '|' '@' | paste -sd';')" \
  "connect_all_wildcard=$(grep -c 'traddr=0\.0\.0\.0' "$LAB_LOGS/connect-all-controllers.txt")" \
  "connect_all_discovery_left=$(grep -c "^$DISCOVERY_NQN|" "$LAB_LOGS/connect-all-controllers.txt")" \
  "connect_all_ns_live=$live" "connect_all_reads_ok=$reads"
# testnqn as imported: serial, model, firmware, a controller id in cntlid_min..cntlid_max; and its data.
if C=/sys/class/nvme/$(nvme_ctrl_for "$T_NQN") && DEV=$(nvme_ns_dev "$T_NQN"); then
  lab_results testnqn_connect_ok=1 "testnqn_serial=$(< "$C/serial")" "testnqn_model=$(< "$C/model")" \
    "testnqn_firmware=$(< "$C/firmware_rev")" "testnqn_cntlid=$(< "$C/cntlid")"
  fio_run fio-verify-testnqn 180 --filename="$DEV" --ioengine=libaio --direct=1 --rw=randwrite --bs=4k --size=1M \
    --iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 --randrepeat=0 && [ "$FIO_ERROR" = 0 ] \
    && lab_result testnqn_verify_ok 1
fi
run_step disconnect-all 60 nvme disconnect-all
wait_for "[ -z \"\$(ours)\" ]" 60 "every controller removed" || lab_die "controllers left: $(ours)"
part connect_all

# --- the daemon's own subsystem: identify, features, log pages -----------------------------------------------------
connect() {
  nvme_connect_rdma "$NQN" "$LAB_TARGET_ADDR" "$PORT" --keep-alive-tmo=$KATO --ctrl-loss-tmo=30 \
    --reconnect-delay=2 || return 1
  for nsid in 1 2 3 4; do nvme_ns_dev_nsid_for "$NQN" $nsid 60 > /dev/null || return 1; done
}
connect || lab_die "nvme connect to $NQN with four namespaces"
CTRL=$(nvme_ctrl_for "$NQN")
lab_result connect_ok 1
KINDS=(ram file block e512)
declare -A NSID=([ram]=1 [file]=2 [block]=3 [e512]=4) DEV
for kind in "${KINDS[@]}"; do DEV[$kind]=$(nvme_ns_dev_nsid "$NQN" "${NSID[$kind]}"); done
lab_log "namespaces: ram ${DEV[ram]} file ${DEV[file]} block ${DEV[block]} e512 ${DEV[e512]} on $CTRL"

run_step id-ctrl 30 nvme id-ctrl "/dev/$CTRL" -H > /dev/null || lab_die "nvme id-ctrl"
nvme_id_results "$LAB_LOGS/id-ctrl.log" ctrl ver cmic mdts cntlid oaes ctratt cntrltype aerl lpa elpe wctemp cctemp \
  kas sqes cqes maxcmd nn oncs vwc sgls ioccsz iorcsz icdoff fcatt msdbd ofcs subnqn
grep -Eqi 'disconnect command +supported' "$LAB_LOGS/id-ctrl.log" && lab_result ctrl_ofcs_decoded 1
for kind in "${KINDS[@]}"; do
  d=${DEV[$kind]}
  run_step "id-ns-$kind" 30 nvme id-ns "$d" -H > /dev/null || lab_die "nvme id-ns $d"
  nvme_id_results "$LAB_LOGS/id-ns-$kind.log" "ns_$kind" nsze ncap nuse nsfeat nlbaf flbas nmic dlfeat nawun \
    nawupf nacwu npwg npwa npdg npda nows
  q=/sys/block/${d#/dev/}/queue
  [[ $(< "$LAB_LOGS/id-ns-$kind.log") =~ LBA\ Format\ +0\ :.*Data\ Size:\ ([0-9]+)\ bytes ]] || lab_die "no LBA format 0 in id-ns"
  lab_results "ns_${kind}_lba_bytes=${BASH_REMATCH[1]}" "host_${kind}_lbs=$(< "$q/logical_block_size")" \
    "host_${kind}_pbs=$(< "$q/physical_block_size")" "host_${kind}_io_opt=$(< "$q/optimal_io_size")" \
    "host_${kind}_discard_max=$(< "$q/discard_max_bytes")"
done

C=/dev/$CTRL
AEC_HOST=$(nvme_feature feat-0b-host "$C" 0x0b)
lab_results "feat_arbitration=$(nvme_feature feat-01 "$C" 0x01)" \
  "feat_arbitration_caps=$(nvme_feature feat-01-caps "$C" 0x01 --sel=3)" \
  "feat_power=$(nvme_feature feat-02 "$C" 0x02)" \
  "feat_temp_over=$(nvme_feature feat-04-over "$C" 0x04)" \
  "feat_temp_under=$(nvme_feature feat-04-under "$C" 0x04 --cdw11=0x100000)" \
  "feat_vwc=$(nvme_feature feat-06 "$C" 0x06)" \
  "feat_queues=$(nvme_feature feat-07 "$C" 0x07)" \
  "feat_irq_coalescing=$(nvme_feature feat-08 "$C" 0x08)" \
  "feat_aec=$AEC_HOST" \
  "feat_kato=$(nvme_feature feat-0f "$C" 0x0f)" \
  "host_queue_count=$(< "/sys/class/nvme/$CTRL/queue_count")" "host_kato=$KATO"
# Async Event Configuration as SPDK's host sets it (11Fh: SMART critical warnings and namespace attribute notices),
# a reserved bit (refused), then the host's own value back.
timeout 30 nvme set-feature "$C" -f 0x0b --value=0x11f > "$LAB_LOGS/set-aec-11f.log" 2>&1
R1=$?
timeout 30 nvme set-feature "$C" -f 0x0b --value=0x20000 > "$LAB_LOGS/set-aec-reserved.log" 2>&1
R2=$?
lab_results "aec_set_11f_rc=$R1" "aec_after_11f=$(nvme_feature feat-0b-after "$C" 0x0b)" "aec_set_reserved_rc=$R2" \
  "aec_set_reserved_status=$(sed -nE 's/.*status.*\((0x[0-9a-fA-F]+)\).*/\1/p' "$LAB_LOGS/set-aec-reserved.log" | head -n1)"
run_step set-aec-restore 30 nvme set-feature "$C" -f 0x0b --value="$AEC_HOST" > /dev/null || lab_die "restore AEC"

timeout 30 nvme supported-log-pages "$C" > "$LAB_LOGS/supported-log-pages.log" 2>&1
R1=$?
timeout 30 nvme get-log "$C" --log-id=0 --log-len=1024 -b > "$LAB_RUN/log00.bin" 2> "$LAB_LOGS/get-log-00.log"
R2=$?
timeout 30 nvme smart-log "$C" -o json > "$LAB_LOGS/smart-log.log" 2>&1 || lab_die "nvme smart-log"
SMART=$(< "$LAB_LOGS/smart-log.log")
[[ $SMART =~ \"temperature\"\ *:\ *([0-9]+) ]] && TEMP=${BASH_REMATCH[1]}
[[ $SMART =~ \"critical_warning\"\ *:\ *([0-9]+) ]] && WARN=${BASH_REMATCH[1]}
# LIDSUPP (bit 0) of each 4-byte entry of log page 00h: the log pages the controller supports.
lab_results "supported_log_pages_rc=$R1" "log00_rc=$R2" \
  "supported_log_pages_listed=$(grep -cE '^LID 0x[0-9a-f]+ .*supports 0x1' "$LAB_LOGS/supported-log-pages.log")" \
  "log00_lids=$(od -An -v -tu4 -w4 "$LAB_RUN/log00.bin" | awk '{ if ($1 % 2) printf "%s%d", n++ ? "," : "", NR - 1 }')" \
  "smart_temperature=${TEMP:-}" "smart_critical_warning=${WARN:-}"

# The 512e namespace carries data like the others (512-byte writes: read-modify-write below the host).
fio_run fio-verify-e512 120 --filename="${DEV[e512]}" --ioengine=libaio --direct=1 --rw=randwrite --bs=512 \
  --size=128k --iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 --randrepeat=0 && [ "$FIO_ERROR" = 0 ] \
  || lab_die "fio verify on 512e"
lab_result verify_e512_ok 1
part identify

# --- a file system on the RAM, the file and the block namespace ------------------------------------------------
dsm_count() { # dsm_count NSID: Dataset Management commands the daemon completed on the namespace
  curl -s --max-time 20 "http://$METRICS/metrics" | awk -v n="nsid=\"$1\"" '/^nvmf_io_latency_seconds_count\{/ &&
    /opcode="dataset_management"/ && index($0, n) { s += $NF } END { printf "%d", s }'
}
# make_tree DIR MANIFEST: directories and files of varied sizes with random content and a symbolic link, in one
# process (every fork costs under TCG); MANIFEST gets their SHA-256 as sha256sum writes it (paths relative to DIR).
make_tree() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import hashlib, os, sys
root, manifest = sys.argv[1], sys.argv[2]
files = {}
for d in ("etc", "var/log", "home/op/docs", "home/op/src"):
    os.makedirs(os.path.join(root, d))
    for i in range(1, 9):
        files[f"./{d}/f{i}.bin"] = os.urandom((i * 37 % 200 + 1) * 1024 + i * 7)
files["./home/op/big.bin"] = os.urandom(1 << 20)
for rel, data in files.items():
    with open(os.path.join(root, rel), "wb") as f:
        f.write(data)
os.symlink("docs/f1.bin", os.path.join(root, "home/op/link"))
with open(manifest, "w") as m:
    for rel in sorted(files):
        m.write(f"{hashlib.sha256(files[rel]).hexdigest()}  {rel}\n")
PY
}
for kind in ram file block; do
  d=${DEV[$kind]}; nsid=${NSID[$kind]}; mnt=$LAB_RUN/mnt-$kind
  mkdir -p "$mnt"
  D0=$(dsm_count "$nsid")
  t=$(cut -d' ' -f1 /proc/uptime)
  run_step "mkfs-$kind" 300 mkfs.ext4 -F "$d" || lab_die "mkfs.ext4 on the $kind namespace ($d)"
  lab_result "mkfs_s_$kind" "$(lab_elapsed "$t")"
  grep -Eq 'Discarding device blocks:.*done' "$LAB_LOGS/mkfs-$kind.log" && lab_result "mkfs_discarded_$kind" 1
  D1=$(dsm_count "$nsid")
  lab_result "dsm_mkfs_$kind" $((D1 - D0))
  run_step "mount-$kind" 60 mount "$d" "$mnt" || lab_die "mount $d"
  make_tree "$mnt" "$MANIFESTS/$kind.sha256" || lab_die "writing the tree on $kind"
  head -c $((2 * 1024 * 1024)) /dev/urandom > "$mnt/scratch.bin" && sync && rm "$mnt/scratch.bin" && sync \
    || lab_die "scratch file on $kind"
  lab_result "files_$kind" "$(wc -l < "$MANIFESTS/$kind.sha256")"
  t=$(cut -d' ' -f1 /proc/uptime)
  run_step "fstrim-$kind" 300 fstrim -v "$mnt" || lab_die "fstrim on the $kind namespace"
  lab_result "fstrim_s_$kind" "$(lab_elapsed "$t")"
  lab_result "trimmed_bytes_$kind" "$(sed -nE 's/.*\(([0-9]+) bytes\) trimmed.*/\1/p' "$LAB_LOGS/fstrim-$kind.log")"
  lab_result "dsm_fstrim_$kind" $(( $(dsm_count "$nsid") - D1 ))
  run_step "umount-$kind" 120 umount "$mnt" || lab_die "umount $mnt"
done

# Disconnect (the host shuts the controller down; the daemon flushes every namespace before SHST complete), then
# reconnect as a host after a reboot would.
# (A shutdown that does not complete in time shows in dmesg as "shutdown timeout"/"incomplete": host_errors.)
nvme_disconnect "$NQN" || lab_die "nvme disconnect"
lab_result disconnect_ok 1
connect || lab_die "reconnect to $NQN"
lab_result reconnect_ok 1
for kind in ram file block; do
  d=$(nvme_ns_dev_nsid "$NQN" "${NSID[$kind]}")
  mnt=$LAB_RUN/mnt-$kind
  run_step "fsck-$kind" 300 fsck.ext4 -n -f "$d"
  lab_result "fsck_rc_$kind" $?
  run_step "mount-again-$kind" 60 mount "$d" "$mnt" || lab_die "mount $d after the reconnect"
  (cd "$mnt" && run_step "sha256-$kind" 120 sha256sum --strict -c "$MANIFESTS/$kind.sha256" > /dev/null)
  lab_result "checksums_rc_$kind" $?
  lab_result "checksums_ok_$kind" "$(grep -c ': OK$' "$LAB_LOGS/sha256-$kind.log")"
  run_step "umount-again-$kind" 120 umount "$mnt" || lab_die "umount $mnt"
done
part filesystem

lab_result io_errors "$(lab_metric "$METRICS" '^nvmf_io_errors_total')"
lab_result backend_errors "$(lab_metric "$METRICS" '^nvmf_backend_errors_total')"
# Zero copy is the default: the RAM namespace's keyed I/O (fio verify, the file system above) took the direct path.
lab_result zero_copy_commands "$(lab_metric "$METRICS" '^nvmf_rdma_zero_copy_commands_total')"
lab_result zero_copy_registered "$(grep -c 'registered a RAM namespace of .* for zero copy' "$LAB_LOGS/daemon.log")"
dmesg | tail -n +"$((DMESG_START + 1))" > "$LAB_LOGS/dmesg-scenario.txt"
grep -Ei 'I/O [0-9]+ .*timeout|timeout, reset|resetting controller|Reconnecting|error recovery|I/O error|shutdown (timeout|incomplete)|not free' \
  "$LAB_LOGS/dmesg-scenario.txt" > "$LAB_LOGS/dmesg-host-errors.txt"
lab_result host_errors "$(wc -l < "$LAB_LOGS/dmesg-host-errors.txt")"
# What the lab's network lost (guest/lib.sh, lab_common_setup: backlog drops show in rxe as failed transmits).
lab_result softnet_drops "$(softnet_drops)"
lab_result rxe_failed_acks "$(grep -c 'Failed sending ACK' "$LAB_LOGS/dmesg-scenario.txt")"
cat "$LAB_LOGS/dmesg-host-errors.txt" >&2
lab_result keepalive_expiries "$(grep -c 'keep-alive timeout' "$LAB_LOGS/daemon.log")"

nvme_disconnect "$NQN" || lab_die "nvme disconnect at the end"
lab_collect_logs
stop_bg daemon 90
RC=$?
lab_result sigterm_exit "$RC"
[ "$RC" = 0 ] || { tail -n 40 "$LAB_LOGS/daemon.log" >&2; lab_die "daemon exit status $RC after SIGTERM"; }
losetup -d "$LOOP" "$B_LOOP" 2>/dev/null
lab_scratch_fs_remove "$SRV"
lab_results "leftover_qp=$(rdma resource show qp | grep -c java)" "leftover_cm_id=$(rdma resource show cm_id | grep -c java)" \
  "interop_wall_s=$(lab_elapsed "$T0")"
echo "daemon-interop: PASS"
