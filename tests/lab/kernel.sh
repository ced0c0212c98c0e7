# Sourced: picks the Debian kernel the lab boots. NVMF_LAB_KERNEL=VERSION overrides; otherwise the newest
# /boot/vmlinuz-VERSION that has a matching /lib/modules/VERSION/modules.dep (the host's own running kernel
# is irrelevant: it may be a different, module-less kernel).
lab_kernel_version() {
  if [ -n "${NVMF_LAB_KERNEL:-}" ]; then echo "$NVMF_LAB_KERNEL"; return 0; fi
  local v best=""
  for f in /boot/vmlinuz-*; do
    [ -e "$f" ] || continue
    v=${f#/boot/vmlinuz-}
    [ -f "/lib/modules/$v/modules.dep" ] || continue
    best=$(printf '%s\n%s\n' "$best" "$v" | sed '/^$/d' | sort -V | tail -n1)
  done
  [ -n "$best" ] || { echo "lab: no /boot/vmlinuz-VERSION with /lib/modules/VERSION (install linux-image-amd64: scripts/setup.sh)" >&2; return 1; }
  echo "$best"
}
