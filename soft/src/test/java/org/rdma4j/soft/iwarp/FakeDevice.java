// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A device as the RDMAP layer sees it: registered windows with guard bytes around each, posted
 * receives, and a log of every completion. Each window sits inside a larger segment whose bytes before
 * and after it are filled with {@link #GUARD} so a test can prove nothing outside was touched.
 */
final class FakeDevice implements StagResolver, RdmapReceiver.Host {
    static final byte GUARD = (byte) 0xA5;
    static final int GUARD_BYTES = 64;

    static final class Region {
        final MemorySegment whole;
        final MemorySegment window;
        final long base;
        final Set<Use> access;
        boolean valid = true;
        boolean foreignPd;

        Region(long size, long base, Set<Use> access) {
            this.whole = Arena.ofAuto().allocate(size + 2L * GUARD_BYTES);
            whole.fill(GUARD);
            this.window = whole.asSlice(GUARD_BYTES, size);
            window.fill((byte) 0);
            this.base = base;
            this.access = access;
        }

        boolean guardsIntact() {
            for (long i = 0; i < GUARD_BYTES; i++) {
                if (whole.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i) != GUARD
                        || whole.get(java.lang.foreign.ValueLayout.JAVA_BYTE, whole.byteSize() - 1 - i) != GUARD) {
                    return false;
                }
            }
            return true;
        }
    }

    record Receive(long id, MemorySegment[] slices) {
    }

    record SendDone(long id, long length, int opcode, int invalidatedStag) {
    }

    final Map<Integer, Region> regions = new HashMap<>();
    final ArrayDeque<Receive> receives = new ArrayDeque<>();
    final List<SendDone> sends = new ArrayList<>();
    final ArrayDeque<RdmapReceiver.ReadRequest> readRequests = new ArrayDeque<>();
    final List<Long> readsDone = new ArrayList<>();
    final List<String> terminates = new ArrayList<>();

    Region register(int stag, long size, long base, Use... access) {
        Region r = new Region(size, base, access.length == 0 ? EnumSet.noneOf(Use.class) : EnumSet.of(access[0], access));
        regions.put(stag, r);
        return r;
    }

    /** Posts a receive of slices of the given sizes; returns the slices. */
    MemorySegment[] post(long id, int... sizes) {
        MemorySegment[] slices = new MemorySegment[sizes.length];
        for (int i = 0; i < sizes.length; i++) {
            slices[i] = Arena.ofAuto().allocate(Math.max(1, sizes[i])).asSlice(0, sizes[i]);
        }
        receives.add(new Receive(id, slices));
        return slices;
    }

    @Override
    public StagError resolve(int stag, Use use, Window window) {
        Region r = regions.get(stag);
        if (r == null || !r.valid) {
            return StagError.INVALID_STAG;
        }
        if (r.foreignPd) {
            return StagError.NOT_ASSOCIATED;
        }
        if (!r.access.contains(use)) {
            return StagError.ACCESS;
        }
        window.set(r.window, r.base);
        return null;
    }

    @Override
    public StagError invalidate(int stag) {
        Region r = regions.get(stag);
        if (r == null) {
            return StagError.INVALID_STAG;
        }
        if (r.foreignPd) {
            return StagError.NOT_ASSOCIATED;
        }
        r.valid = false;
        return null;
    }

    @Override
    public boolean nextReceive(ReceiveBuffer into) {
        Receive r = receives.poll();
        if (r == null) {
            return false;
        }
        into.set(r.id, r.slices, r.slices.length);
        return true;
    }

    @Override
    public void sendReceived(ReceiveBuffer receive, long lengthBytes, int opcode, int invalidatedStag) {
        sends.add(new SendDone(receive.id(), lengthBytes, opcode, invalidatedStag));
    }

    @Override
    public void readRequested(RdmapReceiver.ReadRequest request) {
        readRequests.add(request);
    }

    @Override
    public void readCompleted(long token, long lengthBytes) {
        readsDone.add(token);
    }

    @Override
    public void terminateReceived(int layer, int etype, int ecode, boolean wellFormed) {
        terminates.add(layer + "/" + etype + "/" + ecode + (wellFormed ? "" : " malformed"));
    }
}
