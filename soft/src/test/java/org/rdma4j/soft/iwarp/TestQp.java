// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;

/**
 * One side's queue pair for the connection tests: a {@link FakeDevice} as the STag table (windows with
 * guard bytes) and the completions in arrival order. {@link #next()} waits at most 30 s, so a lost
 * completion fails the test instead of hanging it (a guard, not a timed assertion).
 */
final class TestQp implements IwarpCompletions {
    /** A work completion as the tests compare them. */
    record Wc(boolean recv, long wrId, WcStatus status, WcOpcode opcode, long bytes, int invalidated,
              boolean solicited) {
        static Wc send(long wrId, WcStatus status, WcOpcode opcode, long bytes) {
            return new Wc(false, wrId, status, opcode, bytes, 0, false);
        }

        static Wc recv(long wrId, WcStatus status, long bytes) {
            return new Wc(true, wrId, status, WcOpcode.RECV, bytes, 0, false);
        }

        static Wc flushed(long wrId, WcOpcode opcode) {
            return new Wc(opcode == WcOpcode.RECV, wrId, WcStatus.WR_FLUSH_ERR, opcode, 0, 0, false);
        }
    }

    final FakeDevice device = new FakeDevice();
    final LinkedBlockingQueue<Wc> completions = new LinkedBlockingQueue<>();

    IwarpQp qp(int depth) {
        return IwarpQp.of(device, this, depth);
    }

    @Override
    public void sendCompleted(long wrId, WcStatus status, WcOpcode opcode, long byteLength) {
        completions.add(Wc.send(wrId, status, opcode, byteLength));
    }

    @Override
    public void recvCompleted(long wrId, WcStatus status, long byteLength, int invalidatedStag, boolean solicited) {
        completions.add(new Wc(true, wrId, status, WcOpcode.RECV, byteLength, invalidatedStag, solicited));
    }

    Wc next() throws InterruptedException {
        Wc wc = completions.poll(30, TimeUnit.SECONDS);
        assertNotNull(wc, "no completion within 30 s");
        return wc;
    }

    List<Wc> next(int n) throws InterruptedException {
        List<Wc> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(next());
        }
        return out;
    }

    /** {@return the completions of one queue, in order} */
    static List<Wc> of(List<Wc> all, boolean recv) {
        return all.stream().filter(w -> w.recv() == recv).toList();
    }

    static MemorySegment[] slices(int... sizes) {
        MemorySegment[] out = new MemorySegment[sizes.length];
        for (int i = 0; i < sizes.length; i++) {
            out[i] = Arena.ofAuto().allocate(Math.max(1, sizes[i])).asSlice(0, sizes[i]);
        }
        return out;
    }
}
