// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link;

/**
 * A destination on a {@link DirectLink}, resolved once (per queue pair, when its address vector is
 * set): packets go straight to {@link #sink} while {@link #valid()}, which stops being true as soon
 * as any device attaches to or detaches from the fabric (then resolve again). Immutable.
 */
public final class Route {
    private final LoopbackFabric fabric;
    private final int epoch;
    public final PacketSink sink;

    Route(LoopbackFabric fabric, int epoch, PacketSink sink) {
        this.fabric = fabric;
        this.epoch = epoch;
        this.sink = sink;
    }

    /** True while the fabric's attachments are those this route was resolved against (one volatile read). */
    public boolean valid() {
        return fabric.epoch() == epoch;
    }
}
