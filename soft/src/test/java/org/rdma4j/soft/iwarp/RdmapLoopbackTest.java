// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** A sender and a receiver joined byte to byte: every message kind arrives whole and in place. */
class RdmapLoopbackTest {
    private final Peer a = new Peer(true, 1460, 4, 4);
    private final Peer b = new Peer(true, 1460, 4, 4);
    private final SplittableRandom random = new SplittableRandom(27);

    static MemorySegment bytes(int length, int seed) {
        byte[] b = new byte[length];
        new SplittableRandom(seed).nextBytes(b);
        return MemorySegment.ofArray(b);
    }

    static byte[] concat(MemorySegment[] slices, long length) {
        byte[] out = new byte[(int) length];
        int at = 0;
        for (MemorySegment s : slices) {
            int n = (int) Math.min(s.byteSize(), length - at);
            MemorySegment.copy(s, ValueLayout.JAVA_BYTE, 0, out, at, n);
            at += n;
        }
        return out;
    }

    private void run() {
        assertTrue(Peer.exchange(a, b, random, 4096));
    }

    @Test
    void sendOfZeroBytesCompletesTheReceiveWithLengthZero() {
        b.device.post(7, 16);
        a.outbox.add(s -> s.send(Rdmap.SEND, 0, new MemorySegment[0], 0));
        run();
        assertEquals(List.of(new FakeDevice.SendDone(7, 0, Rdmap.SEND, 0)), b.device.sends);
        assertEquals(2, b.receiver.expectedMsn(Ddp.QUEUE_SEND));
    }

    @Test
    void sendOfOneByteLandsInTheFirstSlice() {
        MemorySegment[] slices = b.device.post(1, 1);
        a.outbox.add(s -> s.send(Rdmap.SEND_SOLICITED, 0, new MemorySegment[] {bytes(1, 5)}, 1));
        run();
        assertEquals(List.of(new FakeDevice.SendDone(1, 1, Rdmap.SEND_SOLICITED, 0)), b.device.sends);
        assertArrayEquals(bytes(1, 5).toArray(ValueLayout.JAVA_BYTE), concat(slices, 1));
    }

    @Test
    void aHundredThousandBytesAtMss1460ArriveAsSeventyFpdusInScatteredReceives() {
        MemorySegment payload = bytes(100_000, 9);
        MemorySegment[] slices = b.device.post(3, 1, 0, 4095, 33_333, 62_571);
        MemorySegment[] gather = {payload.asSlice(0, 10), payload.asSlice(10, 0), payload.asSlice(10, 99_990)};
        a.outbox.add(s -> s.send(Rdmap.SEND, 0, gather, gather.length));
        List<Fpdu> seen = new ArrayList<>();
        List<Integer> offsets = new ArrayList<>();
        FpduReassembler tap = new FpduReassembler(65535, true, f -> {
            seen.add(f);
            offsets.add(f.last() ? -f.messageOffset() - 1 : f.messageOffset());
        });
        MemorySegment out = MemorySegment.ofArray(new byte[200_000]);
        int n = a.produce(out, 200_000);
        assertEquals(FpduError.NONE, tap.receive(out, 0, n));
        assertEquals(70, seen.size(), "1432 payload bytes per FPDU: 1460 & ~7 less 20 header and 4 CRC");
        assertEquals(0, offsets.get(0));
        assertEquals(1432, offsets.get(1));
        assertEquals(-(69 * 1432) - 1, offsets.get(69), "only the last has L, at message offset 69 * 1432");
        b.receiver.receive(out, 0, n);
        assertEquals(List.of(new FakeDevice.SendDone(3, 100_000, Rdmap.SEND, 0)), b.device.sends);
        assertArrayEquals(payload.toArray(ValueLayout.JAVA_BYTE), concat(slices, 100_000));
    }

    @Test
    void aMessageThatFillsExactlyOneFpduIsOneFpduWithL() {
        int max = a.sender.maxTaggedPayload();
        assertEquals(1432 + 4, max, "a tagged header is 4 bytes shorter than an untagged one");
        b.device.register(9, max, 0, StagResolver.Use.REMOTE_WRITE);
        a.outbox.add(s -> s.write(9, 0, new MemorySegment[] {bytes(max, 2)}, 1));
        List<String> seen = new ArrayList<>();
        FpduReassembler tap = new FpduReassembler(65535, true, f -> seen.add(f.payloadLength() + (f.last() ? " L" : "")));
        MemorySegment out = MemorySegment.ofArray(new byte[4000]);
        int n = a.produce(out, 4000);
        assertEquals(FpduError.NONE, tap.receive(out, 0, n));
        assertEquals(List.of(max + " L"), seen, "as siw: L when the rest fits the segment");
        assertEquals(1456, n, "header, payload and CRC fill the MSS rounded down to 8");
    }

    @Test
    void writeLandsAtItsTaggedOffsetAndNowhereElse() {
        FakeDevice.Region r = b.device.register(0x1234_5601, 8192, 0x7000_0000L, StagResolver.Use.REMOTE_WRITE);
        MemorySegment payload = bytes(5000, 11);
        a.outbox.add(s -> s.write(0x1234_5601, 0x7000_0000L + 3000, new MemorySegment[] {payload}, 1));
        run();
        assertFalse(b.receiver.stopped());
        assertArrayEquals(payload.toArray(ValueLayout.JAVA_BYTE), r.window.asSlice(3000, 5000).toArray(ValueLayout.JAVA_BYTE));
        assertTrue(r.window.asSlice(0, 3000).elements(ValueLayout.JAVA_BYTE).allMatch(x -> x.get(ValueLayout.JAVA_BYTE, 0) == 0));
        assertTrue(r.window.asSlice(8000, 192).elements(ValueLayout.JAVA_BYTE).allMatch(x -> x.get(ValueLayout.JAVA_BYTE, 0) == 0));
        assertTrue(r.guardsIntact());
        assertTrue(b.device.sends.isEmpty(), "a Write completes nothing at the target");
    }

    @Test
    void readRequestIsAnsweredAndItsResponseCompletesTheRead() {
        FakeDevice.Region source = b.device.register(0x0000_2201, 10_000, 0, StagResolver.Use.REMOTE_READ);
        MemorySegment data = bytes(10_000, 13);
        source.window.copyFrom(data);
        FakeDevice.Region sink = a.device.register(0x0000_3301, 7000, 0x10_0000L, StagResolver.Use.LOCAL_WRITE);
        int[] msn = new int[2];
        a.outbox.add(s -> msn[0] = s.readRequest(0x0000_3301, 0x10_0000L + 100, 6000, 0x0000_2201, 4000, 42));
        a.outbox.add(s -> msn[1] = s.readRequest(0x0000_3301, 0x10_0000L, 0, 0x0000_2201, 0, 43));
        run();
        assertArrayEquals(new int[] {1, 2}, msn, "queue 1 numbers its messages from 1");
        assertEquals(List.of(42L, 43L), a.device.readsDone);
        assertArrayEquals(data.asSlice(4000, 6000).toArray(ValueLayout.JAVA_BYTE),
                sink.window.asSlice(100, 6000).toArray(ValueLayout.JAVA_BYTE));
        assertTrue(sink.guardsIntact());
        assertEquals(0, a.reads.outboundInFlight());
        assertEquals(0, b.reads.inboundUnanswered());
        assertEquals(3, b.receiver.expectedMsn(Ddp.QUEUE_READ_REQUEST));
    }

    @Test
    void sendWithInvalidateReportsAndInvalidatesTheStag() {
        FakeDevice.Region r = b.device.register(0x0000_4401, 64, 0, StagResolver.Use.REMOTE_WRITE);
        b.device.post(5, 8);
        a.outbox.add(s -> s.send(Rdmap.SEND_SOLICITED_INVALIDATE, 0x0000_4401, new MemorySegment[] {bytes(8, 1)}, 1));
        run();
        assertEquals(List.of(new FakeDevice.SendDone(5, 8, Rdmap.SEND_SOLICITED_INVALIDATE, 0x0000_4401)), b.device.sends);
        assertFalse(r.valid);
        assertNull(b.receiver.terminateToSend());
    }

    @Test
    void sendsAreNumberedFromOnePerQueue() {
        b.device.post(1, 4);
        b.device.post(2, 4);
        int[] msn = new int[2];
        a.outbox.add(s -> msn[0] = s.send(Rdmap.SEND, 0, new MemorySegment[0], 0));
        a.outbox.add(s -> msn[1] = s.send(Rdmap.SEND, 0, new MemorySegment[0], 0));
        run();
        assertArrayEquals(new int[] {1, 2}, msn);
        assertEquals(2, b.device.sends.size());
    }

    @Test
    void aTerminateFromThePeerIsReportedAndStopsTheReceiver() {
        b.device.post(1, 4);
        TerminateCause cause = new TerminateCause().set(Terminate.LAYER_RDMAP, Terminate.RDMAP_CATASTROPHIC,
                Terminate.RDMAP_UNSPECIFIED, MemorySegment.NULL, 0, 0, "test");
        a.sender.terminate(cause);
        a.outbox.add(s -> s.send(Rdmap.SEND, 0, new MemorySegment[0], 0));
        assertFalse(Peer.exchange(a, b, random, 4096), "the Send queued behind the Terminate never starts");
        assertEquals(List.of("0/0/255"), b.device.terminates);
        assertTrue(b.receiver.stopped());
        assertTrue(b.receiver.peerTerminated());
        assertNull(b.receiver.terminateToSend(), "a Terminate is never answered");
        assertTrue(a.sender.terminated());
        assertTrue(b.device.sends.isEmpty());
    }
}
