package org.rdma4j.soft.conformance.udp;

import org.rdma4j.conformance.SendRecvConformanceTest;
import org.rdma4j.verbs.Context;

/** SEND/RECV conformance over the DatagramChannel fallback of the UDP link. */
class ChannelSendRecvConformanceTest extends SendRecvConformanceTest {
    @Override
    protected Context openContext() {
        return UdpFixture.openChannel();
    }

    @Override
    protected Context openPeerContext() {
        return UdpFixture.openChannelPeer();
    }

    @Override
    protected int gidIndex(Context c) {
        return UdpFixture.GID_INDEX;
    }
}
