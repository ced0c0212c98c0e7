package dev.nvmf.target.nvme;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over one 16-byte SGL descriptor (NVMe Base 2.0, 4.1.2 "Scatter Gather List"), e.g. SGL1 at byte 24 of
 * an SQE. Byte 15 is the SGL identifier: descriptor type in bits 7:4, subtype in bits 3:0.
 *
 * <ul>
 *   <li>Keyed SGL Data Block (type 4, NVMe-oF RDMA binding): address 0-7, length 8-10 (24 bits), key 11-14.
 *       Subtype 0xF asks the target to invalidate the key with SEND_WITH_INVALIDATE.</li>
 *   <li>Data Block (type 0) with subtype Offset (1): in-capsule data, address = offset into the in-capsule data,
 *       length 8-11 (32 bits).</li>
 *   <li>Last Segment (type 3) with subtype Offset: a list of descriptors in the capsule (address = offset into the
 *       in-capsule data, length 8-11 = bytes of the list, 16 per descriptor), how a host sends several keyed data
 *       blocks for one command (up to MSDBD, NVMe-oF 1.1 figure 34).</li>
 * </ul>
 */
public final class SglDescriptor {
    public static final int SIZE = 16;

    public static final int ADDRESS = 0;
    public static final int LENGTH = 8;
    public static final int KEY = 11;
    public static final int IDENTIFIER = 15;

    public static final int TYPE_DATA_BLOCK = 0x0;
    public static final int TYPE_BIT_BUCKET = 0x1;
    public static final int TYPE_SEGMENT = 0x2;
    public static final int TYPE_LAST_SEGMENT = 0x3;
    public static final int TYPE_KEYED_DATA_BLOCK = 0x4;
    public static final int TYPE_TRANSPORT_DATA_BLOCK = 0x5;

    public static final int SUBTYPE_ADDRESS = 0x0;
    public static final int SUBTYPE_OFFSET = 0x1;
    public static final int SUBTYPE_TRANSPORT = 0xA;
    public static final int SUBTYPE_INVALIDATE_KEY = 0xF;

    /** Identifier byte of a keyed data block asking for remote invalidation (what the Linux host sends). */
    public static final int KEYED_INVALIDATE = (TYPE_KEYED_DATA_BLOCK << 4) | SUBTYPE_INVALIDATE_KEY;
    /** Identifier byte of a plain keyed data block. */
    public static final int KEYED_ADDRESS = TYPE_KEYED_DATA_BLOCK << 4;
    /** Identifier byte of an in-capsule data block. */
    public static final int DATA_BLOCK_OFFSET = (TYPE_DATA_BLOCK << 4) | SUBTYPE_OFFSET;
    /** Identifier byte of a Last Segment descriptor whose list is in the capsule. */
    public static final int LAST_SEGMENT_OFFSET = (TYPE_LAST_SEGMENT << 4) | SUBTYPE_OFFSET;

    /**
     * The most data block descriptors one command may carry: what Identify Controller reports as MSDBD and the RDMA
     * transport accepts in a Last Segment list (SPDK's host and target use 16, SPDK rdma.c
     * {@code SPDK_NVMF_MAX_SGL_ENTRIES}).
     */
    public static final int MAX_DATA_DESCRIPTORS = 16;

    /** Largest length a keyed descriptor can carry (24 bits). */
    public static final int KEYED_MAX_LENGTH = 0xFF_FFFF;

    private MemorySegment segment = MemorySegment.NULL;
    private long base;

    /** Points at the descriptor starting at {@code offset} in {@code segment}. */
    public SglDescriptor wrap(MemorySegment segment, long offset) {
        this.segment = segment;
        this.base = offset;
        return this;
    }

    public int identifier() { return Le.u8(segment, base + IDENTIFIER); }
    public int type() { return identifier() >>> 4; }
    public int subtype() { return identifier() & 0xF; }

    public long address() { return Le.u64(segment, base + ADDRESS); }

    /** Keyed data block length: 24 bits. */
    public int keyedLength() {
        return Le.u16(segment, base + LENGTH) | (Le.u8(segment, base + LENGTH + 2) << 16);
    }

    public int key() { return Le.u32(segment, base + KEY); }

    /** Data block / segment length: 32 bits, unsigned (returned as long). */
    public long length() { return Le.u32(segment, base + LENGTH) & 0xFFFF_FFFFL; }

    /** The length this descriptor describes, whatever its type (keyed: 24 bits; others: 32 bits). */
    public long dataLength() {
        return type() == TYPE_KEYED_DATA_BLOCK ? keyedLength() : length();
    }

    /** Writes a keyed data block (identifier {@link #KEYED_INVALIDATE} or {@link #KEYED_ADDRESS}). */
    public SglDescriptor keyed(long address, int length, int key, boolean invalidate) {
        Le.u64(segment, base + ADDRESS, address);
        Le.u16(segment, base + LENGTH, length & 0xFFFF);
        Le.u8(segment, base + LENGTH + 2, (length >>> 16) & 0xFF);
        Le.u32(segment, base + KEY, key);
        Le.u8(segment, base + IDENTIFIER, invalidate ? KEYED_INVALIDATE : KEYED_ADDRESS);
        return this;
    }

    /** Writes an in-capsule data block descriptor (offset into the in-capsule data, length in bytes). */
    public SglDescriptor inCapsule(long offset, int length) {
        return unkeyed(offset, length, DATA_BLOCK_OFFSET);
    }

    /**
     * Writes a Last Segment descriptor for a list of {@code length} bytes (16 per descriptor) at {@code offset} in
     * the in-capsule data, as SPDK's host sends several keyed data blocks.
     */
    public SglDescriptor lastSegment(long offset, int length) {
        return unkeyed(offset, length, LAST_SEGMENT_OFFSET);
    }

    private SglDescriptor unkeyed(long address, int length, int identifier) {
        Le.u64(segment, base + ADDRESS, address);
        Le.u32(segment, base + LENGTH, length);
        Le.u16(segment, base + 12, 0);
        Le.u8(segment, base + 14, 0);
        Le.u8(segment, base + IDENTIFIER, identifier);
        return this;
    }
}
