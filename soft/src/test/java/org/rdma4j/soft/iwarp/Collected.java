// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/** A handler that keeps a copy of every FPDU's bytes and where it was found, for comparing runs. */
final class Collected implements FpduReassembler.Handler {
    final List<String> fpdus = new ArrayList<>();
    final List<Fpdu> views = new ArrayList<>();
    final List<MemorySegment> segments = new ArrayList<>();

    @Override
    public void onFpdu(Fpdu fpdu) {
        byte[] bytes = fpdu.segment().asSlice(fpdu.offset(), fpdu.fpduLength()).toArray(ValueLayout.JAVA_BYTE);
        fpdus.add(Hex.of(bytes));
        segments.add(fpdu.segment());
        views.add(fpdu);
    }

    /** Feeds {@code stream} in chunks of the given sizes (cycled), then what is left in one go. */
    static FpduError feed(FpduReassembler r, byte[] stream, int... chunkSizes) {
        MemorySegment s = MemorySegment.ofArray(stream);
        int at = 0;
        int i = 0;
        FpduError e = FpduError.NONE;
        while (at < stream.length) {
            int n = Math.min(chunkSizes.length == 0 ? stream.length : chunkSizes[i++ % chunkSizes.length],
                    stream.length - at);
            e = r.receive(s, at, n);
            at += n;
        }
        return e;
    }
}
