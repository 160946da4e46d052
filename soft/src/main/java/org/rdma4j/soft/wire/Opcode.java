// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

/**
 * The BTH opcodes as one table: for each of the 256 values, whether it is valid, its name, its
 * transport, which extension headers follow the BTH and where, and what the packet does.
 *
 * <p>The table is data (the private {@code ROWS} array); the transport engines read it through
 * static lookups over small arrays indexed by opcode, so the hot path neither allocates nor switches on an enum.
 * Extension headers follow the BTH in the IBTA order DETH, RETH, AtomicETH, AETH, AtomicAckETH,
 * ImmDt, IETH, for example:
 * <pre>
 *   RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE   BTH | RETH | ImmDt | payload
 *   UD_SEND_ONLY_WITH_IMMEDIATE         BTH | DETH | ImmDt | payload
 *   RC_RDMA_READ_RESPONSE_FIRST         BTH | AETH | payload
 *   RC_ATOMIC_ACKNOWLEDGE               BTH | AETH | AtomicAckETH
 * </pre>
 * Every lookup uses only the low 8 bits of its {@code op} argument and never throws; an invalid
 * opcode has no flags, header length 0, transport {@link #TRANSPORT_NONE} and a name like
 * {@code "INVALID_0x15"}.
 *
 * <p>Stateless after class initialisation; safe for any number of threads.
 */
public final class Opcode {
    // ---- opcode values (IBTA; RC base 0x00, UC base 0x20, UD base 0x60) ----
    /** Opcode 0x00. */
    public static final int RC_SEND_FIRST = 0x00;
    /** Opcode 0x01. */
    public static final int RC_SEND_MIDDLE = 0x01;
    /** Opcode 0x02. */
    public static final int RC_SEND_LAST = 0x02;
    /** Opcode 0x03. */
    public static final int RC_SEND_LAST_WITH_IMMEDIATE = 0x03;
    /** Opcode 0x04. */
    public static final int RC_SEND_ONLY = 0x04;
    /** Opcode 0x05. */
    public static final int RC_SEND_ONLY_WITH_IMMEDIATE = 0x05;
    /** Opcode 0x06. */
    public static final int RC_RDMA_WRITE_FIRST = 0x06;
    /** Opcode 0x07. */
    public static final int RC_RDMA_WRITE_MIDDLE = 0x07;
    /** Opcode 0x08. */
    public static final int RC_RDMA_WRITE_LAST = 0x08;
    /** Opcode 0x09. */
    public static final int RC_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x09;
    /** Opcode 0x0a. */
    public static final int RC_RDMA_WRITE_ONLY = 0x0A;
    /** Opcode 0x0b. */
    public static final int RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x0B;
    /** Opcode 0x0c. */
    public static final int RC_RDMA_READ_REQUEST = 0x0C;
    /** Opcode 0x0d. */
    public static final int RC_RDMA_READ_RESPONSE_FIRST = 0x0D;
    /** Opcode 0x0e. */
    public static final int RC_RDMA_READ_RESPONSE_MIDDLE = 0x0E;
    /** Opcode 0x0f. */
    public static final int RC_RDMA_READ_RESPONSE_LAST = 0x0F;
    /** Opcode 0x10. */
    public static final int RC_RDMA_READ_RESPONSE_ONLY = 0x10;
    /** Opcode 0x11. */
    public static final int RC_ACKNOWLEDGE = 0x11;
    /** Opcode 0x12. */
    public static final int RC_ATOMIC_ACKNOWLEDGE = 0x12;
    /** Opcode 0x13. */
    public static final int RC_COMPARE_SWAP = 0x13;
    /** Opcode 0x14. */
    public static final int RC_FETCH_ADD = 0x14;
    /** Opcode 0x16. */
    public static final int RC_SEND_LAST_WITH_INVALIDATE = 0x16;
    /** Opcode 0x17. */
    public static final int RC_SEND_ONLY_WITH_INVALIDATE = 0x17;

    /** Opcode 0x20. */
    public static final int UC_SEND_FIRST = 0x20;
    /** Opcode 0x21. */
    public static final int UC_SEND_MIDDLE = 0x21;
    /** Opcode 0x22. */
    public static final int UC_SEND_LAST = 0x22;
    /** Opcode 0x23. */
    public static final int UC_SEND_LAST_WITH_IMMEDIATE = 0x23;
    /** Opcode 0x24. */
    public static final int UC_SEND_ONLY = 0x24;
    /** Opcode 0x25. */
    public static final int UC_SEND_ONLY_WITH_IMMEDIATE = 0x25;
    /** Opcode 0x26. */
    public static final int UC_RDMA_WRITE_FIRST = 0x26;
    /** Opcode 0x27. */
    public static final int UC_RDMA_WRITE_MIDDLE = 0x27;
    /** Opcode 0x28. */
    public static final int UC_RDMA_WRITE_LAST = 0x28;
    /** Opcode 0x29. */
    public static final int UC_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x29;
    /** Opcode 0x2a. */
    public static final int UC_RDMA_WRITE_ONLY = 0x2A;
    /** Opcode 0x2b. */
    public static final int UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x2B;

    /** Opcode 0x64. */
    public static final int UD_SEND_ONLY = 0x64;
    /** Opcode 0x65. */
    public static final int UD_SEND_ONLY_WITH_IMMEDIATE = 0x65;

    // ---- transports ----
    /** Reliable connected. */
    public static final int TRANSPORT_RC = 0;
    /** Unreliable connected. */
    public static final int TRANSPORT_UC = 1;
    /** Unreliable datagram. */
    public static final int TRANSPORT_UD = 2;
    /** What {@link #transport(int)} returns for an invalid opcode. */
    public static final int TRANSPORT_NONE = -1;

    // ---- extension header identifiers, in wire order, for offsetOf ----
    /** Identifies the DETH for {@link #offsetOf(int, int)}. */
    public static final int HEADER_DETH = 0;
    /** Identifies the RETH for {@link #offsetOf(int, int)}. */
    public static final int HEADER_RETH = 1;
    /** Identifies the AtomicETH for {@link #offsetOf(int, int)}. */
    public static final int HEADER_ATOMIC_ETH = 2;
    /** Identifies the AETH for {@link #offsetOf(int, int)}. */
    public static final int HEADER_AETH = 3;
    /** Identifies the AtomicAckETH for {@link #offsetOf(int, int)}. */
    public static final int HEADER_ATOMIC_ACK_ETH = 4;
    /** Identifies the ImmDt for {@link #offsetOf(int, int)}. */
    public static final int HEADER_IMM_DT = 5;
    /** Identifies the IETH for {@link #offsetOf(int, int)}. */
    public static final int HEADER_IETH = 6;
    private static final int HEADER_COUNT = 7;
    private static final int[] HEADER_LENGTHS = {
        Deth.LENGTH, Reth.LENGTH, AtomicEth.LENGTH, Aeth.LENGTH, AtomicAckEth.LENGTH, ImmDt.LENGTH, Ieth.LENGTH};

    // ---- flag bits returned by flags(op); bit n of the low seven is header n ----
    /** Flag: the packet carries the DETH. */
    public static final int HAS_DETH = 1 << HEADER_DETH;
    /** Flag: the packet carries the RETH. */
    public static final int HAS_RETH = 1 << HEADER_RETH;
    /** Flag: the packet carries the AtomicETH. */
    public static final int HAS_ATOMIC_ETH = 1 << HEADER_ATOMIC_ETH;
    /** Flag: the packet carries the AETH. */
    public static final int HAS_AETH = 1 << HEADER_AETH;
    /** Flag: the packet carries the AtomicAckETH. */
    public static final int HAS_ATOMIC_ACK_ETH = 1 << HEADER_ATOMIC_ACK_ETH;
    /** Flag: the packet carries the ImmDt. */
    public static final int HAS_IMM_DT = 1 << HEADER_IMM_DT;
    /** Flag: the packet carries the IETH. */
    public static final int HAS_IETH = 1 << HEADER_IETH;
    /** The packet may carry payload after its headers. */
    public static final int HAS_PAYLOAD = 1 << 7;
    /** Sent by a requester. */
    public static final int REQUEST = 1 << 8;
    /** Sent by a responder. */
    public static final int RESPONSE = 1 << 9;
    /** Part of a SEND message. */
    public static final int SEND = 1 << 10;
    /** Part of an RDMA WRITE message. */
    public static final int WRITE = 1 << 11;
    /** An RDMA READ request or one of its responses. */
    public static final int READ = 1 << 12;
    /** An atomic request or its ATOMIC ACKNOWLEDGE. */
    public static final int ATOMIC = 1 << 13;
    /** Position: first packet of a multi-packet message; also a position argument. */
    public static final int FIRST = 1 << 14;
    /** Position: middle packet of a multi-packet message; also a position argument. */
    public static final int MIDDLE = 1 << 15;
    /** Position: last packet of a multi-packet message; also a position argument. */
    public static final int LAST = 1 << 16;
    /** Position: the message is this one packet; also a position argument. */
    public static final int ONLY = 1 << 17;
    /**
     * The message needs a receive WQE: every SEND packet, and RDMA WRITE LAST/ONLY WITH IMMEDIATE.
     * A responder takes the WQE at a SEND's FIRST or ONLY packet and at the write-with-immediate
     * packet itself.
     */
    public static final int CONSUMES_RECV = 1 << 18;
    /** An RC request: the responder answers it with an ACK/NAK, a read response or an atomic ACK. */
    public static final int REQUIRES_ACK = 1 << 19;
    /** The opcode is defined. */
    public static final int VALID = 1 << 20;

    private static final int POSITIONS = FIRST | MIDDLE | LAST | ONLY;

    /** One row of the opcode table: the opcode, its IBTA name and its flag bits. */
    private record Row(int opcode, String name, int flags) {
    }

    /** The opcode table. Headers, lengths, offsets and transport derive from it. */
    private static final Row[] ROWS = {
        new Row(RC_SEND_FIRST, "RC_SEND_FIRST", REQUEST | SEND | FIRST | HAS_PAYLOAD | CONSUMES_RECV),
        new Row(RC_SEND_MIDDLE, "RC_SEND_MIDDLE", REQUEST | SEND | MIDDLE | HAS_PAYLOAD | CONSUMES_RECV),
        new Row(RC_SEND_LAST, "RC_SEND_LAST", REQUEST | SEND | LAST | HAS_PAYLOAD | CONSUMES_RECV),
        new Row(RC_SEND_LAST_WITH_IMMEDIATE, "RC_SEND_LAST_WITH_IMMEDIATE",
            REQUEST | SEND | LAST | HAS_IMM_DT | HAS_PAYLOAD | CONSUMES_RECV),
        new Row(RC_SEND_ONLY, "RC_SEND_ONLY", REQUEST | SEND | ONLY | HAS_PAYLOAD | CONSUMES_RECV),
        new Row(RC_SEND_ONLY_WITH_IMMEDIATE, "RC_SEND_ONLY_WITH_IMMEDIATE",
            REQUEST | SEND | ONLY | HAS_IMM_DT | HAS_PAYLOAD | CONSUMES_RECV),
        new Row(RC_RDMA_WRITE_FIRST, "RC_RDMA_WRITE_FIRST", REQUEST | WRITE | FIRST | HAS_RETH | HAS_PAYLOAD),
        new Row(RC_RDMA_WRITE_MIDDLE, "RC_RDMA_WRITE_MIDDLE", REQUEST | WRITE | MIDDLE | HAS_PAYLOAD),
        new Row(RC_RDMA_WRITE_LAST, "RC_RDMA_WRITE_LAST", REQUEST | WRITE | LAST | HAS_PAYLOAD),
        new Row(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
            REQUEST | WRITE | LAST | HAS_IMM_DT | HAS_PAYLOAD | CONSUMES_RECV),
        new Row(RC_RDMA_WRITE_ONLY, "RC_RDMA_WRITE_ONLY", REQUEST | WRITE | ONLY | HAS_RETH | HAS_PAYLOAD),
        new Row(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
            REQUEST | WRITE | ONLY | HAS_RETH | HAS_IMM_DT | HAS_PAYLOAD | CONSUMES_RECV),
        new Row(RC_RDMA_READ_REQUEST, "RC_RDMA_READ_REQUEST", REQUEST | READ | ONLY | HAS_RETH),
        new Row(RC_RDMA_READ_RESPONSE_FIRST, "RC_RDMA_READ_RESPONSE_FIRST",
            RESPONSE | READ | FIRST | HAS_AETH | HAS_PAYLOAD),
        new Row(RC_RDMA_READ_RESPONSE_MIDDLE, "RC_RDMA_READ_RESPONSE_MIDDLE", RESPONSE | READ | MIDDLE | HAS_PAYLOAD),
        new Row(RC_RDMA_READ_RESPONSE_LAST, "RC_RDMA_READ_RESPONSE_LAST",
            RESPONSE | READ | LAST | HAS_AETH | HAS_PAYLOAD),
        new Row(RC_RDMA_READ_RESPONSE_ONLY, "RC_RDMA_READ_RESPONSE_ONLY",
            RESPONSE | READ | ONLY | HAS_AETH | HAS_PAYLOAD),
        new Row(RC_ACKNOWLEDGE, "RC_ACKNOWLEDGE", RESPONSE | ONLY | HAS_AETH),
        new Row(RC_ATOMIC_ACKNOWLEDGE, "RC_ATOMIC_ACKNOWLEDGE",
            RESPONSE | ATOMIC | ONLY | HAS_AETH | HAS_ATOMIC_ACK_ETH),
        new Row(RC_COMPARE_SWAP, "RC_COMPARE_SWAP", REQUEST | ATOMIC | ONLY | HAS_ATOMIC_ETH),
        new Row(RC_FETCH_ADD, "RC_FETCH_ADD", REQUEST | ATOMIC | ONLY | HAS_ATOMIC_ETH),
        new Row(RC_SEND_LAST_WITH_INVALIDATE, "RC_SEND_LAST_WITH_INVALIDATE",
            REQUEST | SEND | LAST | HAS_IETH | HAS_PAYLOAD | CONSUMES_RECV),
        new Row(RC_SEND_ONLY_WITH_INVALIDATE, "RC_SEND_ONLY_WITH_INVALIDATE",
            REQUEST | SEND | ONLY | HAS_IETH | HAS_PAYLOAD | CONSUMES_RECV),

        new Row(UC_SEND_FIRST, "UC_SEND_FIRST", REQUEST | SEND | FIRST | HAS_PAYLOAD | CONSUMES_RECV),
        new Row(UC_SEND_MIDDLE, "UC_SEND_MIDDLE", REQUEST | SEND | MIDDLE | HAS_PAYLOAD | CONSUMES_RECV),
        new Row(UC_SEND_LAST, "UC_SEND_LAST", REQUEST | SEND | LAST | HAS_PAYLOAD | CONSUMES_RECV),
        new Row(UC_SEND_LAST_WITH_IMMEDIATE, "UC_SEND_LAST_WITH_IMMEDIATE",
            REQUEST | SEND | LAST | HAS_IMM_DT | HAS_PAYLOAD | CONSUMES_RECV),
        new Row(UC_SEND_ONLY, "UC_SEND_ONLY", REQUEST | SEND | ONLY | HAS_PAYLOAD | CONSUMES_RECV),
        new Row(UC_SEND_ONLY_WITH_IMMEDIATE, "UC_SEND_ONLY_WITH_IMMEDIATE",
            REQUEST | SEND | ONLY | HAS_IMM_DT | HAS_PAYLOAD | CONSUMES_RECV),
        new Row(UC_RDMA_WRITE_FIRST, "UC_RDMA_WRITE_FIRST", REQUEST | WRITE | FIRST | HAS_RETH | HAS_PAYLOAD),
        new Row(UC_RDMA_WRITE_MIDDLE, "UC_RDMA_WRITE_MIDDLE", REQUEST | WRITE | MIDDLE | HAS_PAYLOAD),
        new Row(UC_RDMA_WRITE_LAST, "UC_RDMA_WRITE_LAST", REQUEST | WRITE | LAST | HAS_PAYLOAD),
        new Row(UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
            REQUEST | WRITE | LAST | HAS_IMM_DT | HAS_PAYLOAD | CONSUMES_RECV),
        new Row(UC_RDMA_WRITE_ONLY, "UC_RDMA_WRITE_ONLY", REQUEST | WRITE | ONLY | HAS_RETH | HAS_PAYLOAD),
        new Row(UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
            REQUEST | WRITE | ONLY | HAS_RETH | HAS_IMM_DT | HAS_PAYLOAD | CONSUMES_RECV),

        new Row(UD_SEND_ONLY, "UD_SEND_ONLY", REQUEST | SEND | ONLY | HAS_DETH | HAS_PAYLOAD | CONSUMES_RECV),
        new Row(UD_SEND_ONLY_WITH_IMMEDIATE, "UD_SEND_ONLY_WITH_IMMEDIATE",
            REQUEST | SEND | ONLY | HAS_DETH | HAS_IMM_DT | HAS_PAYLOAD | CONSUMES_RECV),
    };

    private static final int[] FLAGS = new int[256];
    private static final byte[] HEADER_LENGTH = new byte[256];
    private static final byte[] TRANSPORT = new byte[256];
    private static final byte[] OFFSETS = new byte[256 * HEADER_COUNT];
    private static final String[] NAMES = new String[256];

    static {
        for (int op = 0; op < 256; op++) {
            NAMES[op] = String.format("INVALID_0x%02X", op);
            TRANSPORT[op] = TRANSPORT_NONE;
        }
        java.util.Arrays.fill(OFFSETS, (byte) -1);
        for (Row row : ROWS) {
            int op = row.opcode();
            int transport = transportOfValue(op);
            int flags = row.flags() | VALID
                | (transport == TRANSPORT_RC && (row.flags() & REQUEST) != 0 ? REQUIRES_ACK : 0);
            NAMES[op] = row.name();
            FLAGS[op] = flags;
            TRANSPORT[op] = (byte) transport;
            int at = Bth.LENGTH;
            for (int header = 0; header < HEADER_COUNT; header++) {
                if ((flags & 1 << header) != 0) {
                    OFFSETS[op * HEADER_COUNT + header] = (byte) at;
                    at += HEADER_LENGTHS[header];
                }
            }
            HEADER_LENGTH[op] = (byte) at;
        }
    }

    private Opcode() {
    }

    /** The top three opcode bits name the transport: 000 RC, 001 UC, 011 UD (010 RD is unsupported). */
    private static int transportOfValue(int op) {
        return switch (op >>> 5) {
            case 0 -> TRANSPORT_RC;
            case 1 -> TRANSPORT_UC;
            case 3 -> TRANSPORT_UD;
            default -> throw new IllegalStateException("no supported transport for opcode " + op);
        };
    }

    /**
     * {@return whether it is defined}
     *
     * @param op an opcode
     */
    public static boolean isValid(int op) {
        return (FLAGS[op & 0xFF] & VALID) != 0;
    }

    /**
     * {@return its name, e.g. {@code "RC_SEND_FIRST"}, or {@code "INVALID_0x15"}}
     *
     * @param op an opcode
     */
    public static String name(int op) {
        return NAMES[op & 0xFF];
    }

    /**
     * {@return all its flag bits ({@link #HAS_RETH}, {@link #SEND}, {@link #FIRST}, ...)}
     *
     * @param op an opcode
     */
    public static int flags(int op) {
        return FLAGS[op & 0xFF];
    }

    /**
     * {@return {@link #TRANSPORT_RC}, {@link #TRANSPORT_UC}, {@link #TRANSPORT_UD} or {@link #TRANSPORT_NONE}}
     *
     * @param op an opcode
     */
    public static int transport(int op) {
        return TRANSPORT[op & 0xFF];
    }

    /**
     * {@return bytes from the start of the BTH to the payload (BTH plus extension headers); 0 if invalid}
     *
     * @param op an opcode
     */
    public static int headerLength(int op) {
        return HEADER_LENGTH[op & 0xFF];
    }

    /**
     * Where an extension header sits.
     *
     * @param op     an opcode
     * @param header one of the {@code HEADER_*} identifiers
     * @return the header's offset from the start of the BTH, or -1 if {@code op} does not carry it
     */
    public static int offsetOf(int op, int header) {
        return OFFSETS[(op & 0xFF) * HEADER_COUNT + header];
    }

    /**
     * {@return its position bit: {@link #FIRST}, {@link #MIDDLE}, {@link #LAST}, {@link #ONLY}, or 0 if invalid}
     *
     * @param op an opcode
     */
    public static int position(int op) {
        return FLAGS[op & 0xFF] & POSITIONS;
    }

    /**
     * {@return whether it carries a DETH}
     *
     * @param op an opcode
     */
    public static boolean hasDeth(int op) {
        return has(op, HAS_DETH);
    }

    /**
     * {@return whether it carries a RETH}
     *
     * @param op an opcode
     */
    public static boolean hasReth(int op) {
        return has(op, HAS_RETH);
    }

    /**
     * {@return whether it carries an AtomicETH}
     *
     * @param op an opcode
     */
    public static boolean hasAtomicEth(int op) {
        return has(op, HAS_ATOMIC_ETH);
    }

    /**
     * {@return whether it carries an AETH}
     *
     * @param op an opcode
     */
    public static boolean hasAeth(int op) {
        return has(op, HAS_AETH);
    }

    /**
     * {@return whether it carries an AtomicAckETH}
     *
     * @param op an opcode
     */
    public static boolean hasAtomicAckEth(int op) {
        return has(op, HAS_ATOMIC_ACK_ETH);
    }

    /**
     * {@return whether it carries immediate data}
     *
     * @param op an opcode
     */
    public static boolean hasImmDt(int op) {
        return has(op, HAS_IMM_DT);
    }

    /**
     * {@return whether it carries an IETH}
     *
     * @param op an opcode
     */
    public static boolean hasIeth(int op) {
        return has(op, HAS_IETH);
    }

    /**
     * {@return whether it may carry payload}
     *
     * @param op an opcode
     */
    public static boolean hasPayload(int op) {
        return has(op, HAS_PAYLOAD);
    }

    /**
     * {@return whether a requester sends it}
     *
     * @param op an opcode
     */
    public static boolean isRequest(int op) {
        return has(op, REQUEST);
    }

    /**
     * {@return whether a responder sends it}
     *
     * @param op an opcode
     */
    public static boolean isResponse(int op) {
        return has(op, RESPONSE);
    }

    /**
     * {@return whether it belongs to a SEND}
     *
     * @param op an opcode
     */
    public static boolean isSend(int op) {
        return has(op, SEND);
    }

    /**
     * {@return whether it belongs to an RDMA WRITE}
     *
     * @param op an opcode
     */
    public static boolean isWrite(int op) {
        return has(op, WRITE);
    }

    /**
     * {@return whether it is an RDMA READ request or response}
     *
     * @param op an opcode
     */
    public static boolean isRead(int op) {
        return has(op, READ);
    }

    /**
     * {@return whether it is an atomic request or an ATOMIC ACKNOWLEDGE}
     *
     * @param op an opcode
     */
    public static boolean isAtomic(int op) {
        return has(op, ATOMIC);
    }

    /**
     * {@return whether it is the first packet of a multi-packet message}
     *
     * @param op an opcode
     */
    public static boolean isFirst(int op) {
        return has(op, FIRST);
    }

    /**
     * {@return whether it is a middle packet of a multi-packet message}
     *
     * @param op an opcode
     */
    public static boolean isMiddle(int op) {
        return has(op, MIDDLE);
    }

    /**
     * {@return whether it is the last packet of a multi-packet message}
     *
     * @param op an opcode
     */
    public static boolean isLast(int op) {
        return has(op, LAST);
    }

    /**
     * {@return whether it is a whole single-packet message}
     *
     * @param op an opcode
     */
    public static boolean isOnly(int op) {
        return has(op, ONLY);
    }

    /**
     * {@return whether it starts a message (FIRST or ONLY)}
     *
     * @param op an opcode
     */
    public static boolean isStart(int op) {
        return has(op, FIRST | ONLY);
    }

    /**
     * {@return whether it ends a message (LAST or ONLY)}
     *
     * @param op an opcode
     */
    public static boolean isEnd(int op) {
        return has(op, LAST | ONLY);
    }

    /**
     * {@return see {@link #CONSUMES_RECV}}
     *
     * @param op an opcode
     */
    public static boolean consumesRecv(int op) {
        return has(op, CONSUMES_RECV);
    }

    /**
     * {@return see {@link #REQUIRES_ACK}}
     *
     * @param op an opcode
     */
    public static boolean requiresAck(int op) {
        return has(op, REQUIRES_ACK);
    }

    /**
     * Picks the opcode of one SEND packet.
     *
     * @param transport  {@link #TRANSPORT_RC}, {@link #TRANSPORT_UC} or {@link #TRANSPORT_UD}
     * @param position   {@link #FIRST}, {@link #MIDDLE}, {@link #LAST} or {@link #ONLY}
     * @param withImm    the message carries immediate data (LAST/ONLY only)
     * @param withInv    the message invalidates a remote key (RC LAST/ONLY only)
     * @return the opcode, or -1 if no opcode has that combination
     */
    public static int sendOpcode(int transport, int position, boolean withImm, boolean withInv) {
        int relative = switch (position) {
            case FIRST -> 0x00;
            case MIDDLE -> 0x01;
            case LAST -> withInv ? 0x16 : withImm ? 0x03 : 0x02;
            case ONLY -> withInv ? 0x17 : withImm ? 0x05 : 0x04;
            default -> -1;
        };
        int expected = SEND | position | (withImm ? HAS_IMM_DT : 0) | (withInv ? HAS_IETH : 0);
        return checked(transport, relative, expected, SEND | POSITIONS | HAS_IMM_DT | HAS_IETH);
    }

    /**
     * Picks the opcode of one RDMA WRITE packet.
     *
     * @param transport {@link #TRANSPORT_RC} or {@link #TRANSPORT_UC}
     * @param position  {@link #FIRST}, {@link #MIDDLE}, {@link #LAST} or {@link #ONLY}
     * @param withImm   the message carries immediate data (LAST/ONLY only)
     * @return the opcode, or -1 if no opcode has that combination
     */
    public static int writeOpcode(int transport, int position, boolean withImm) {
        int relative = switch (position) {
            case FIRST -> 0x06;
            case MIDDLE -> 0x07;
            case LAST -> withImm ? 0x09 : 0x08;
            case ONLY -> withImm ? 0x0B : 0x0A;
            default -> -1;
        };
        int expected = WRITE | position | (withImm ? HAS_IMM_DT : 0);
        return checked(transport, relative, expected, WRITE | POSITIONS | HAS_IMM_DT);
    }

    /**
     * Picks the opcode of one RDMA READ response packet (RC only).
     *
     * @param position {@link #FIRST}, {@link #MIDDLE}, {@link #LAST} or {@link #ONLY}
     * @return the opcode, or -1 for another position value
     */
    public static int readResponseOpcode(int position) {
        return switch (position) {
            case FIRST -> RC_RDMA_READ_RESPONSE_FIRST;
            case MIDDLE -> RC_RDMA_READ_RESPONSE_MIDDLE;
            case LAST -> RC_RDMA_READ_RESPONSE_LAST;
            case ONLY -> RC_RDMA_READ_RESPONSE_ONLY;
            default -> -1;
        };
    }

    /** Guards the arithmetic above with the table, so a helper can never return an opcode the table disowns. */
    private static int checked(int transport, int relative, int expected, int compareMask) {
        int base = switch (transport) {
            case TRANSPORT_RC -> 0x00;
            case TRANSPORT_UC -> 0x20;
            case TRANSPORT_UD -> 0x60;
            default -> -1;
        };
        if (base < 0 || relative < 0) {
            return -1;
        }
        int op = base + relative;
        return op < 256 && (FLAGS[op] & compareMask) == expected && isValid(op) ? op : -1;
    }

    private static boolean has(int op, int mask) {
        return (FLAGS[op & 0xFF] & mask) != 0;
    }
}
