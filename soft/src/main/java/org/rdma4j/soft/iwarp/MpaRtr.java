// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.lang.foreign.MemorySegment;

/**
 * The ready-to-receive (RTR) message of MPA peer-to-peer mode (RFC 6581): the first FPDU, sent by the
 * initiator after it accepted the reply, that lets the responder enter RTS. As siw does it
 * ({@code siw_qp_mpa_rts}, {@code siw_proc_mpareq}): the responder answers a peer-to-peer request with
 * the zero-length RDMA Write if the initiator offered it, else the zero-length Read if offered, else the
 * Write (a zero-length Send would need a posted receive and is neither offered nor accepted); the
 * initiator sends the one the reply names, Write first. Both are one FPDU:
 *
 * <pre>
 *  WRITE: tagged RDMA Write, last, Data Sink STag 1, tagged offset 0, no payload          (20 bytes)
 *  READ:  RDMA Read Request on queue 1, MSN 1, MO 0, sink STag 0, sink offset 0, size 0,
 *         source STag 1, source offset 0                                                  (52 bytes)
 * </pre>
 *
 * (STag 1 because "some HW may treat STag 0 special"; a zero-length Write or Read is never checked
 * against an STag.) The responder answers the Read with a zero-length Read Response to the sink STag
 * and offset. Every FPDU carries the 4-byte CRC field, zero when CRC is off. Stateless.
 */
public enum MpaRtr {
    /** No RTR: peer-to-peer mode was not negotiated. */
    NONE(0),
    /** A zero-length RDMA Write. */
    WRITE(MpaFrame.ORD_WRITE_RTR),
    /** A zero-length RDMA Read Request, answered by a zero-length Read Response. */
    READ(MpaFrame.ORD_READ_RTR);

    /** The STag siw puts in an RTR. */
    public static final int RTR_STAG = 1;
    /** The MSN of the RTR Read Request: the first on queue 1. */
    public static final int RTR_READ_MSN = 1;

    private final int ordBit;

    MpaRtr(int ordBit) {
        this.ordBit = ordBit;
    }

    /** {@return the bit of the ORD word that names this RTR, 0 for none} */
    public int ordBit() {
        return ordBit;
    }

    /**
     * {@return the RTR an ORD word names, the Write first when both bits are set}
     *
     * @param ordWord the ORD word of an MPA v2 frame
     */
    public static MpaRtr named(int ordWord) {
        if ((ordWord & MpaFrame.ORD_WRITE_RTR) != 0) {
            return WRITE;
        }
        return (ordWord & MpaFrame.ORD_READ_RTR) != 0 ? READ : NONE;
    }

    /** {@return the length of this RTR's FPDU on the wire, 0 for none} */
    public int fpduLength() {
        return switch (this) {
            case NONE -> 0;
            case WRITE -> FpduEncoder.fpduLength(Ddp.TAGGED_HEADER_LENGTH, 0);
            case READ -> FpduEncoder.fpduLength(Rdmap.READ_REQUEST_HEADER_LENGTH, 0);
        };
    }

    /**
     * Writes this RTR's FPDU.
     *
     * @param encoder the connection's encoder (CRC as negotiated)
     * @param dst     the segment
     * @param at      where the FPDU goes
     * @return its length
     * @throws IllegalStateException for {@link #NONE}
     */
    public int encode(FpduEncoder encoder, MemorySegment dst, long at) {
        return switch (this) {
            case NONE -> throw new IllegalStateException("no RTR was negotiated");
            case WRITE -> encoder.tagged(dst, at, Rdmap.RDMA_WRITE, true, RTR_STAG, 0, dst,
                    at + Ddp.TAGGED_HEADER_LENGTH, 0);
            case READ -> encoder.readRequest(dst, at, RTR_READ_MSN, 0, 0, 0, RTR_STAG, 0);
        };
    }

    /**
     * Writes the zero-length Read Response that answers a READ RTR.
     *
     * @param encoder    the connection's encoder
     * @param dst        the segment
     * @param at         where the FPDU goes
     * @param sinkStag   the RTR's sink STag
     * @param sinkOffset the RTR's sink tagged offset
     * @return its length
     */
    public static int encodeReadResponse(FpduEncoder encoder, MemorySegment dst, long at, int sinkStag,
                                         long sinkOffset) {
        return encoder.tagged(dst, at, Rdmap.RDMA_READ_RESPONSE, true, sinkStag, sinkOffset, dst,
                at + Ddp.TAGGED_HEADER_LENGTH, 0);
    }

    /**
     * Checks that the {@link #fpduLength()} bytes at {@code at} are this RTR: ULPDU length, control field
     * (opcode, last, versions 1), no payload; for the Read, queue 1, MSN 1, MO 0 and size 0; the CRC when
     * negotiated. STags and offsets are not checked, as siw does not check them for zero-length
     * operations.
     *
     * @param s   the segment
     * @param at  where the FPDU starts
     * @param crc whether CRC was negotiated
     * @return whether the bytes are this RTR
     */
    public boolean matches(MemorySegment s, long at, boolean crc) {
        int header = switch (this) {
            case NONE -> throw new IllegalStateException("no RTR was negotiated");
            case WRITE -> Ddp.TAGGED_HEADER_LENGTH;
            case READ -> Rdmap.READ_REQUEST_HEADER_LENGTH;
        };
        int opcode = this == WRITE ? Rdmap.RDMA_WRITE : Rdmap.RDMA_READ_REQUEST;
        if (Ddp.ulpduLength(s, at) != header - Ddp.ULPDU_LENGTH_SIZE
                || Ddp.control(s, at) != Rdmap.control(opcode, true)) {
            return false;
        }
        if (this == READ && (Ddp.queueNumber(s, at) != Ddp.QUEUE_READ_REQUEST || Ddp.msn(s, at) != RTR_READ_MSN
                || Ddp.messageOffset(s, at) != 0 || Rdmap.readSize(s, at) != 0)) {
            return false;
        }
        int length = fpduLength();
        return !crc || Crc32c.readWire(s, at + length - FpduEncoder.CRC_SIZE)
                == new Crc32c().compute(s, at, length - FpduEncoder.CRC_SIZE);
    }
}
