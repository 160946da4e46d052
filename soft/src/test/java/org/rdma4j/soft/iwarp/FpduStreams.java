// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/** Random well-formed FPDU streams for the property tests: the bytes and each FPDU's bytes in hex. */
final class FpduStreams {
    final byte[] bytes;
    final List<String> fpdus;
    final int[] starts;

    private FpduStreams(byte[] bytes, List<String> fpdus, int[] starts) {
        this.bytes = bytes;
        this.fpdus = fpdus;
        this.starts = starts;
    }

    /** A stream of 1 to {@code maxFpdus} FPDUs of every opcode, payloads up to {@code maxPayload}. */
    static FpduStreams random(SplittableRandom random, boolean crc, int maxFpdus, int maxPayload) {
        int count = 1 + random.nextInt(maxFpdus);
        MemorySegment out = MemorySegment.ofArray(new byte[count * (maxPayload + 80)]);
        byte[] payload = new byte[maxPayload + 48];
        random.nextBytes(payload);
        MemorySegment p = MemorySegment.ofArray(payload);
        FpduEncoder encoder = new FpduEncoder(crc);
        List<String> fpdus = new ArrayList<>();
        int[] starts = new int[count];
        int at = 0;
        for (int i = 0; i < count; i++) {
            int op = random.nextInt(Rdmap.MAX_OPCODE + 1);
            int n = random.nextInt(maxPayload + 1);
            boolean last = random.nextBoolean();
            int length = switch (op) {
                case Rdmap.RDMA_WRITE, Rdmap.RDMA_READ_RESPONSE -> encoder.tagged(out, at, op, last,
                        random.nextInt(), random.nextLong(), p, random.nextInt(48), n);
                case Rdmap.RDMA_READ_REQUEST -> encoder.readRequest(out, at, random.nextInt(), random.nextInt(),
                        random.nextLong(), random.nextInt(), random.nextInt(), random.nextLong());
                case Rdmap.TERMINATE -> encoder.terminate(out, at, 1, random.nextInt(), p, 0,
                        new int[] {0, 16, 20, 48}[random.nextInt(4)]);
                default -> encoder.send(out, at, op, last, random.nextInt(), random.nextInt(), random.nextInt(),
                        p, random.nextInt(48), n);
            };
            starts[i] = at;
            fpdus.add(Hex.of(out.asSlice(at, length).toArray(ValueLayout.JAVA_BYTE)));
            at += length;
        }
        return new FpduStreams(Arrays.copyOf(out.toArray(ValueLayout.JAVA_BYTE), at), fpdus, starts);
    }

    /** Chunk sizes for a stream: mostly small, sometimes large, never zero. */
    static int[] chunking(SplittableRandom random, int streamLength) {
        int[] sizes = new int[1 + random.nextInt(16)];
        for (int i = 0; i < sizes.length; i++) {
            sizes[i] = random.nextInt(4) == 0 ? 1 + random.nextInt(Math.max(1, streamLength)) : 1 + random.nextInt(9);
        }
        return sizes;
    }
}
