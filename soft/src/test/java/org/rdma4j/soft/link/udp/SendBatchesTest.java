// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The loop around sendmmsg: partial results are continued from where the kernel stopped, a datagram
 * whose call fails (EAGAIN mid-batch) is dropped while the rest still go in order, EINTR retries a
 * bounded number of times, and nothing loops forever.
 */
class SendBatchesTest {
    /**
     * A kernel stand-in: sends at most {@code perCall} entries per call, fails entry {@code failAt}
     * (when a call reaches it, the datagrams before it are sent and the call returns their count; a call
     * starting at it returns {@code error}) {@code failures} times.
     */
    private static final class FakeKernel implements SendBatches.Sender {
        final List<Integer> wire = new ArrayList<>();
        final List<String> calls = new ArrayList<>();
        final int perCall;
        final int failAt;
        final int error;
        int failures;

        FakeKernel(int perCall, int failAt, int error, int failures) {
            this.perCall = perCall;
            this.failAt = failAt;
            this.error = error;
            this.failures = failures;
        }

        @Override
        public int sendFrom(int from, int count) {
            calls.add(from + "+" + count);
            int n = Math.min(count, perCall);
            for (int i = 0; i < n; i++) {
                if (from + i == failAt && failures > 0) {
                    if (i == 0) {
                        failures--;
                        return error;
                    }
                    return i;
                }
                wire.add(from + i);
            }
            return n;
        }
    }

    @Test
    void oneCallWhenTheKernelTakesEverything() {
        FakeKernel k = new FakeKernel(16, -1, 0, 0);
        assertEquals(16, SendBatches.sendAll(k, 16));
        assertEquals(List.of("0+16"), k.calls);
        assertEquals(16, k.wire.size());
    }

    @Test
    void aPartialResultIsContinuedWhereTheKernelStopped() {
        FakeKernel k = new FakeKernel(5, -1, 0, 0);
        assertEquals(12, SendBatches.sendAll(k, 12));
        assertEquals(List.of("0+12", "5+7", "10+2"), k.calls);
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), k.wire);
    }

    @Test
    void eagainMidBatchDropsThatDatagramAndTheRestStillGoInOrder() {
        FakeKernel k = new FakeKernel(16, 3, -LinuxSockets.EAGAIN, Integer.MAX_VALUE);
        assertEquals(7, SendBatches.sendAll(k, 8));
        assertEquals(List.of(0, 1, 2, 4, 5, 6, 7), k.wire);
        assertEquals(List.of("0+8", "3+5", "4+4"), k.calls);
    }

    @Test
    void aFailingFirstDatagramIsDroppedToo() {
        FakeKernel k = new FakeKernel(16, 0, -105 /* ENOBUFS */, Integer.MAX_VALUE);
        assertEquals(3, SendBatches.sendAll(k, 4));
        assertEquals(List.of(1, 2, 3), k.wire);
    }

    @Test
    void eintrRetriesTheSameDatagram() {
        FakeKernel k = new FakeKernel(16, 2, -LinuxSockets.EINTR, 2);
        assertEquals(6, SendBatches.sendAll(k, 6));
        assertEquals(List.of(0, 1, 2, 3, 4, 5), k.wire);
        assertEquals(List.of("0+6", "2+4", "2+4", "2+4"), k.calls);
    }

    @Test
    void endlessEintrEndsWithTheDatagramDropped() {
        FakeKernel k = new FakeKernel(16, 1, -LinuxSockets.EINTR, Integer.MAX_VALUE);
        assertEquals(2, SendBatches.sendAll(k, 3));
        assertEquals(List.of(0, 2), k.wire);
        assertEquals(1 + 1 + SendBatches.EINTR_RETRIES + 1, k.calls.size());
    }

    @Test
    void aKernelThatReturnsZeroCannotMakeItLoop() {
        SendBatches.Sender zero = (from, count) -> 0;
        assertEquals(0, SendBatches.sendAll(zero, 4));
    }
}
