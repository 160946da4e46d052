// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * Random message sequences (Sends into random scatter lists, Writes, Reads, in both directions) through
 * random output windows and random TCP chunkings, with or without CRC, at random MSS: everything arrives
 * identical to a model that applies the messages in order.
 */
class RdmapPropertiesTest {
    private static final int WINDOW = 6000;

    @Property(tries = 150)
    void randomMessagesThroughRandomChunkingsArriveIdentical(@ForAll long seed, @ForAll boolean crc) {
        SplittableRandom random = new SplittableRandom(seed);
        int mss = 32 + random.nextInt(3000);
        Peer a = new Peer(crc, mss, 3, 3);
        Peer b = new Peer(crc, 32 + random.nextInt(3000), 3, 3);
        FakeDevice.Region target = b.device.register(0x100, WINDOW, 1L << 40, StagResolver.Use.REMOTE_WRITE);
        FakeDevice.Region source = b.device.register(0x200, WINDOW, 0, StagResolver.Use.REMOTE_READ);
        source.window.copyFrom(RdmapLoopbackTest.bytes(WINDOW, random.nextInt()));
        FakeDevice.Region sink = a.device.register(0x300, WINDOW, 77, StagResolver.Use.LOCAL_WRITE);
        byte[] targetModel = new byte[WINDOW];
        byte[] sinkModel = new byte[WINDOW];
        List<byte[]> sent = new ArrayList<>();
        List<MemorySegment[]> posted = new ArrayList<>();
        int reads = 0;
        int messages = 1 + random.nextInt(12);
        for (int i = 0; i < messages; i++) {
            int kind = random.nextInt(3);
            int length = random.nextInt(4) == 0 ? random.nextInt(3) : random.nextInt(5000);
            MemorySegment data = RdmapLoopbackTest.bytes(length, random.nextInt());
            if (kind == 0) {
                posted.add(b.device.post(i, split(random, length + random.nextInt(3))));
                sent.add(data.toArray(ValueLayout.JAVA_BYTE));
                MemorySegment[] gather = gather(random, data);
                int op = Rdmap.SEND + random.nextInt(2) * 2;
                a.outbox.add(s -> s.send(op, 0, gather, gather.length));
            } else if (kind == 1) {
                int at = random.nextInt(WINDOW - length + 1);
                MemorySegment.copy(data, ValueLayout.JAVA_BYTE, 0, targetModel, at, length);
                MemorySegment[] gather = gather(random, data);
                a.outbox.add(s -> s.write(0x100, (1L << 40) + at, gather, gather.length));
            } else {
                int from = random.nextInt(WINDOW - length + 1);
                int to = random.nextInt(WINDOW - length + 1);
                MemorySegment.copy(source.window, ValueLayout.JAVA_BYTE, from, sinkModel, to, length);
                long token = reads++;
                a.outbox.addRead(0x300, 77 + to, length, 0x200, from, token);
            }
        }
        assertTrue(Peer.exchange(a, b, random, 1 + random.nextInt(9000)));
        assertFalse(a.receiver.stopped() || b.receiver.stopped(), String.valueOf(b.receiver.terminateToSend()));
        assertEquals(sent.size(), b.device.sends.size());
        for (int i = 0; i < sent.size(); i++) {
            assertEquals(sent.get(i).length, b.device.sends.get(i).length());
            assertArrayEquals(sent.get(i), RdmapLoopbackTest.concat(posted.get(i), sent.get(i).length));
        }
        assertArrayEquals(targetModel, target.window.toArray(ValueLayout.JAVA_BYTE));
        assertArrayEquals(sinkModel, sink.window.toArray(ValueLayout.JAVA_BYTE));
        assertEquals(reads, a.device.readsDone.size());
        assertTrue(target.guardsIntact() && sink.guardsIntact());
        assertEquals(0, a.reads.outboundInFlight());
        assertEquals(0, b.reads.inboundUnanswered());
    }

    /** Slice sizes adding up to {@code total}, zero-length ones included. */
    private static int[] split(SplittableRandom random, int total) {
        int parts = 1 + random.nextInt(4);
        int[] sizes = new int[parts];
        int left = total;
        for (int i = 0; i < parts - 1; i++) {
            sizes[i] = random.nextInt(left + 1);
            left -= sizes[i];
        }
        sizes[parts - 1] = left;
        return sizes;
    }

    private static MemorySegment[] gather(SplittableRandom random, MemorySegment data) {
        int[] sizes = split(random, (int) data.byteSize());
        MemorySegment[] slices = new MemorySegment[sizes.length];
        long at = 0;
        for (int i = 0; i < sizes.length; i++) {
            slices[i] = data.asSlice(at, sizes[i]);
            at += sizes[i];
        }
        return slices;
    }
}
