// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The Terminate one side owes its peer after an error: layer, type and code, and the copy of the failed
 * segment's headers chosen as siw's {@code siw_send_terminate} chooses it:
 * <ul>
 *   <li>DDP layer: M and D, the failed DDP header (16 bytes tagged, 20 untagged), except for a bad DDP
 *       version, whose layout is unknown;</li>
 *   <li>RDMAP remote protection: M, D and R, the whole RDMAP header (48 bytes for a Read Request, else
 *       20);</li>
 *   <li>RDMAP remote operation: M and D, the DDP header, except for a bad RDMAP version or opcode;</li>
 *   <li>RDMAP local catastrophic and LLP (MPA) errors: no copy.</li>
 * </ul>
 * With M set, the copy's first two bytes (the ULPDU length on the wire) carry the DDP segment length;
 * like siw, that is the failed segment's payload length (its ULPDU length less its header).
 *
 * <p>Filled once, on the error path; the copy buffer is allocated with the object. Not thread safe:
 * written by the side that failed, then read by the sender.
 */
public final class TerminateCause {
    private final MemorySegment copy = Arena.ofAuto().allocate(Rdmap.READ_REQUEST_HEADER_LENGTH);
    private int layer = -1;
    private int etype;
    private int ecode;
    private int flags;
    private int copyLength;
    private String why = "no error";

    /** Creates an empty cause. */
    public TerminateCause() {
    }

    /**
     * Records an error and its copy of the failed segment.
     *
     * @param layer     the Terminate layer, see {@link Terminate#LAYER_RDMAP}
     * @param etype     the error type
     * @param ecode     the error code
     * @param failed    the failed segment's first bytes, from its ULPDU length on (missing bytes read as 0)
     * @param at        where they start
     * @param available how many of them there are (0 when none)
     * @param why       what went wrong, in words (no peer-supplied text)
     * @return this
     */
    public TerminateCause set(int layer, int etype, int ecode, MemorySegment failed, long at, int available,
                              String why) {
        this.layer = layer;
        this.etype = etype;
        this.ecode = ecode;
        this.why = why;
        copy.fill((byte) 0);
        long n = Math.min(Math.max(available, 0), copy.byteSize());
        if (n > 0) {
            MemorySegment.copy(failed, at, copy, 0, n);
        }
        int control = n >= Ddp.CONTROL_OFFSET + 2 ? Ddp.control(copy, 0) : 0;
        int ddpLength = Ddp.tagged(control) ? Ddp.TAGGED_HEADER_LENGTH : Ddp.UNTAGGED_HEADER_LENGTH;
        flags = 0;
        copyLength = 0;
        if (layer == Terminate.LAYER_DDP) {
            boolean version = etype == Terminate.DDP_TAGGED && ecode == Terminate.DDP_T_VERSION
                    || etype == Terminate.DDP_UNTAGGED && ecode == Terminate.DDP_U_VERSION;
            if (!version) {
                flags = Terminate.FLAG_SEGMENT_LENGTH_VALID | Terminate.FLAG_DDP_HEADER;
                copyLength = ddpLength;
            }
        } else if (layer == Terminate.LAYER_RDMAP && etype == Terminate.RDMAP_REMOTE_PROTECTION) {
            flags = Terminate.FLAG_SEGMENT_LENGTH_VALID | Terminate.FLAG_DDP_HEADER | Terminate.FLAG_RDMAP_HEADER;
            copyLength = Ddp.opcode(control) == Rdmap.RDMA_READ_REQUEST ? Rdmap.READ_REQUEST_HEADER_LENGTH
                    : Ddp.UNTAGGED_HEADER_LENGTH;
        } else if (layer == Terminate.LAYER_RDMAP && etype == Terminate.RDMAP_REMOTE_OPERATION
                && ecode != Terminate.RDMAP_VERSION && ecode != Terminate.RDMAP_OPCODE) {
            flags = Terminate.FLAG_SEGMENT_LENGTH_VALID | Terminate.FLAG_DDP_HEADER;
            copyLength = ddpLength;
        }
        if (copyLength > 0) {
            int header = Rdmap.headerLength(Ddp.opcode(control));
            int payload = header < 0 ? 0 : Ddp.ulpduLength(copy, 0) + Ddp.ULPDU_LENGTH_SIZE - header;
            Ddp.ulpduLength(copy, 0, Math.max(0, payload));
        }
        return this;
    }

    /**
     * Records a refused Read Request source found while answering it (siw: "in tx"): RDMAP remote
     * protection with the refusal's code, and a Read Request header rebuilt from the request.
     *
     * @param error        why the source was refused
     * @param msn          the Read Request's MSN
     * @param sinkStag     its sink STag
     * @param sinkOffset   its sink tagged offset
     * @param size         its size
     * @param sourceStag   its source STag
     * @param sourceOffset its source tagged offset
     * @return this
     */
    public TerminateCause readSourceRefused(StagError error, int msn, int sinkStag, long sinkOffset, int size,
                                            int sourceStag, long sourceOffset) {
        MemorySegment h = Arena.ofAuto().allocate(Rdmap.READ_REQUEST_HEADER_LENGTH);
        Ddp.ulpduLength(h, 0, Rdmap.READ_REQUEST_HEADER_LENGTH - Ddp.ULPDU_LENGTH_SIZE);
        Ddp.control(h, 0, Rdmap.control(Rdmap.RDMA_READ_REQUEST, true));
        Ddp.untaggedHeader(h, 0, 0, Ddp.QUEUE_READ_REQUEST, msn, 0);
        Rdmap.readRequestBody(h, 0, sinkStag, sinkOffset, size, sourceStag, sourceOffset);
        return set(Terminate.LAYER_RDMAP, Terminate.RDMAP_REMOTE_PROTECTION, error.rdmapCode(), h, 0,
                (int) h.byteSize(), "the source of an inbound RDMA Read Request is refused: " + error);
    }

    /** {@return whether an error is recorded} */
    public boolean present() {
        return layer >= 0;
    }

    /** {@return the Terminate layer, -1 when none} */
    public int layer() {
        return layer;
    }

    /** {@return the error type} */
    public int etype() {
        return etype;
    }

    /** {@return the error code} */
    public int ecode() {
        return ecode;
    }

    /** {@return the M/D/R flags of the Terminate Control word} */
    public int flags() {
        return flags;
    }

    /** {@return the Terminate Control word} */
    public int controlWord() {
        return Terminate.controlWord(layer, etype, ecode, flags);
    }

    /** {@return the copied header, empty when the Terminate carries none} */
    public MemorySegment copiedHeader() {
        return copy.asSlice(0, copyLength);
    }

    /** {@return what went wrong, with the Terminate triple in words} */
    public String words() {
        return present() ? why + ": " + Terminate.describe(layer, etype, ecode) : why;
    }

    @Override
    public String toString() {
        return words();
    }
}
