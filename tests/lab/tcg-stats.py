#!/usr/bin/env python3
"""The emulator's translation counters, on the guest's request (started by tests/lab/lab.sh).

Under TCG, QEMU translates guest code into host code, one translation block (TB) at a time, and keeps the
translations in a buffer; a guest write to a page that holds translated code invalidates the blocks on it, and a
full buffer is flushed (everything is translated again). A guest page-table switch (a CR3 load) flushes the
emulated TLB: every later memory access takes the slow path once per page; QEMU counts such a flush as "full" when
every MMU mode held entries and otherwise as "partial", once per mode flushed. The monitor's `info jit` counts all
of these. A scenario reads them before and after a measured step (lib.sh: lab_tcg_stats), so that a job's count of
new translated code, invalidations and TLB flushes is known per I/O: the cost the emulator adds on top of the
guest's own work, and one that real hardware does not have.

Protocol, through the results share (the guest has no other way to the host):
  OUT/tcg-request   the guest writes a sequence number N (one line)
  OUT/tcg-stats     this program answers with one fixed-width line, rewritten in place (never truncated), that
                    starts and ends with N: "seq N tb_flush A tb_invalidate B tlb_full C tlb_partial D
                    tlb_elided E code_bytes F tb_count G end N". A reader that sees two different N caught a
                    write halfway and reads again. Seq 0 is written once the monitor answered the first time.
It queries the monitor only when asked: `info jit` walks every translation block with the emulator's big lock
held, so it is never run while a job is measured.

Usage: tcg-stats.py MONITOR_SOCKET OUT_DIR. Ends when the monitor closes (the VM stopped).
"""
import os
import re
import socket
import sys
import time

FIELDS = (
    ("tb_flush", r"TB flush count\s+(\d+)"),
    ("tb_invalidate", r"TB invalidate count\s+(\d+)"),
    ("tlb_full", r"TLB full flushes\s+(\d+)"),
    ("tlb_partial", r"TLB partial flushes\s+(\d+)"),
    ("tlb_elided", r"TLB elided flushes\s+(\d+)"),
    ("code_bytes", r"gen code size\s+(\d+)/"),
    ("tb_count", r"TB count\s+(\d+)"),
)
PROMPT = b"(qemu) "
POLL_S = 0.02


def connect(path, deadline):
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            return s
        except OSError:
            s.close()
            if time.monotonic() > deadline:
                return None
            time.sleep(0.1)


def until_prompt(s):
    """The monitor's output up to its next prompt; None when it closed."""
    buf = b""
    while not buf.endswith(PROMPT):
        chunk = s.recv(65536)
        if not chunk:
            return None
        buf += chunk
    return buf.decode(errors="replace")


def parse(text):
    """The counters of one `info jit` answer, in FIELDS order; -1 for one this QEMU does not print."""
    values = []
    for _, pattern in FIELDS:
        m = re.search(pattern, text)
        values.append(int(m.group(1)) if m else -1)
    return values


def line(seq, values):
    parts = ["seq %020d" % seq]
    parts += ["%s %020d" % (name, v) for (name, _), v in zip(FIELDS, values)]
    parts.append("end %020d" % seq)
    return (" ".join(parts) + "\n").encode()


def main():
    sock_path, out = sys.argv[1], sys.argv[2]
    s = connect(sock_path, time.monotonic() + 60)
    if s is None:
        return 1
    if until_prompt(s) is None:    # the banner
        return 0
    stats = os.path.join(out, "tcg-stats")
    request = os.path.join(out, "tcg-request")
    fd = os.open(stats, os.O_RDWR | os.O_CREAT, 0o644)

    def answer(seq):
        s.sendall(b"info jit\n")
        text = until_prompt(s)
        if text is None:
            return False
        os.pwrite(fd, line(seq, parse(text)), 0)
        return True

    if not answer(0):
        return 0
    served = "0"
    parent = os.getppid()
    while os.getppid() == parent:    # lab.sh gone (killed): so is the VM
        try:
            with open(request) as f:
                want = f.read().strip()
        except OSError:
            want = served
        if want != served and want.isdigit():
            if not answer(int(want)):
                return 0
            served = want
        time.sleep(POLL_S)
    return 0


if __name__ == "__main__":
    sys.exit(main())
