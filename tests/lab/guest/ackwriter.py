#!/usr/bin/env python3
"""Writes blocks to a block device and logs each write only once the device acknowledged it durably; later checks
that every logged block reads back intact. For the lab's crash scenario (daemon-lifecycle.sh): the target is killed
while writers run, restarted, and the host must read back every write acknowledged before the kill.

  ackwriter.py write DEV LOG --first BLOCK --count N --mode fua|flush [--batch K] [--seed S]
  ackwriter.py check DEV LOG... [--seed S]

write: the blocks FIRST..FIRST+N-1 (4096 bytes each), each written exactly once, in an order shuffled by the seed,
through O_DIRECT. Mode fua: the device is opened O_DSYNC, so every write goes out with Force Unit Access (the block
layer sets REQ_FUA on a dsync direct write when the device has a volatile write cache); a block is logged when its
pwrite returns. Mode flush: plain writes, and after every K of them an fsync (a Flush command); the K blocks are
logged only when the fsync returns. A block's content is a function of the seed and its number, so the checker
needs only the log. The first failed write or flush ends the writer: exit status 3 (the target is gone), with a
line saying how many blocks were acknowledged.

check: reads every block named in the logs and compares it with what was written. Prints "checked N mismatched M"
and the first mismatches (what was found instead: zeroes, another block's header, other bytes); exit 1 if any
block differs or if a log names no block at all.
"""
import argparse
import mmap
import os
import random
import sys

BLOCK = 4096
MAGIC = b"NVMFACK1"


def content(seed, block):
    head = MAGIC + seed.to_bytes(8, "little") + block.to_bytes(8, "little")
    return head + random.Random(seed * 1_000_003 + block).randbytes(BLOCK - len(head))


def write(args):
    flags = os.O_WRONLY | os.O_DIRECT | (os.O_DSYNC if args.mode == "fua" else 0)
    fd = os.open(args.dev, flags)
    buf = mmap.mmap(-1, BLOCK)  # page aligned, as O_DIRECT needs
    order = list(range(args.first, args.first + args.count))
    random.Random(args.seed + args.first).shuffle(order)
    acked = 0
    pending = []
    with open(args.log, "a", buffering=1) as log:
        try:
            for block in order:
                buf[:] = content(args.seed, block)
                if os.pwrite(fd, buf, block * BLOCK) != BLOCK:
                    raise OSError("short write of block %d" % block)
                if args.mode == "fua":
                    log.write("%d\n" % block)
                    acked += 1
                else:
                    pending.append(block)
                    if len(pending) == args.batch:
                        os.fsync(fd)
                        log.write("".join("%d\n" % b for b in pending))
                        acked += len(pending)
                        pending.clear()
            if pending:
                os.fsync(fd)
                log.write("".join("%d\n" % b for b in pending))
                acked += len(pending)
        except OSError as e:
            print("ackwriter %s: %s after %d acknowledged blocks (%d written, not flushed)"
                  % (args.mode, e, acked, len(pending)), flush=True)
            return 3
    print("ackwriter %s: done, %d blocks acknowledged" % (args.mode, acked), flush=True)
    return 0


def check(args):
    fd = os.open(args.dev, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, BLOCK)
    checked = mismatched = 0
    for path in args.logs:
        with open(path) as f:
            blocks = [int(line) for line in f if line.strip()]
        if not blocks:
            print("check: %s names no block" % path)
            mismatched += 1
        for block in blocks:
            if os.preadv(fd, [buf], block * BLOCK) != BLOCK:
                raise OSError("short read of block %d" % block)
            checked += 1
            want = content(args.seed, block)
            if buf[:] != want:
                mismatched += 1
                if mismatched <= 10:
                    got = bytes(buf[:24])
                    if got == bytes(24):
                        what = "zeroes"
                    elif got[:8] == MAGIC:
                        what = "the header of block %d (seed %d)" % (int.from_bytes(got[16:24], "little"),
                                                                    int.from_bytes(got[8:16], "little"))
                    else:
                        what = "other bytes %s" % got.hex()
                    print("check: block %d (from %s) differs: found %s" % (block, os.path.basename(path), what))
    print("checked %d mismatched %d" % (checked, mismatched), flush=True)
    return 1 if mismatched else 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("dev")
    w.add_argument("log")
    w.add_argument("--first", type=int, required=True)
    w.add_argument("--count", type=int, required=True)
    w.add_argument("--mode", choices=["fua", "flush"], required=True)
    w.add_argument("--batch", type=int, default=8)
    w.add_argument("--seed", type=int, default=13)
    c = sub.add_parser("check")
    c.add_argument("dev")
    c.add_argument("logs", nargs="+")
    c.add_argument("--seed", type=int, default=13)
    args = p.parse_args()
    return write(args) if args.cmd == "write" else check(args)


if __name__ == "__main__":
    sys.exit(main())
