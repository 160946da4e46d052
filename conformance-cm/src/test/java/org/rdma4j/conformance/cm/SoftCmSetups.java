// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance.cm;

import static org.rdma4j.conformance.Capability.HOP_LIMIT_AND_CLASS;
import static org.rdma4j.conformance.Capability.RELIABLE_LINK;
import static org.rdma4j.conformance.Capability.SELF_LOOPBACK;

import java.net.InetAddress;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.rdma4j.conformance.Capability;
import org.rdma4j.conformance.ConformanceSetup;
import org.rdma4j.conformance.QpConnector;
import org.rdma4j.conformance.SetupProvider;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Verbs;

/**
 * The suites of this module's surefire run on two in-process soft devices whose RC pairs the
 * connection manager connects ({@link CmQpConnector} over the devices' own QP1: REQ, REP, RTU as MADs),
 * setup {@code loopback-cm}. What it checks beyond soft's {@code loopback} setup: that a pair the CM
 * connected, with the program's own QPs moved by rdma_init_qp_attr's values, behaves in every data-path
 * test as one connected by modify_qp. The native provider's siw setup (interop) uses the same connector.
 */
public final class SoftCmSetups implements SetupProvider {
    /** GID index of the address the CM resolves (a soft loopback device's IPv6 link-local entry). */
    static final int GID_INDEX = 1;

    /** One per JVM: the devices' names are unique, and every caller of {@link #setups()} shares them. */
    private static final LoopbackCm LOOPBACK_CM = new LoopbackCm();

    @Override
    public List<ConformanceSetup> setups() {
        return List.of(LOOPBACK_CM);
    }

    static final class LoopbackCm implements ConformanceSetup {
        private Device a;
        private Device b;
        private CmQpConnector connector;

        private synchronized void make() {
            if (a == null) {
                a = Verbs.createDevice("soft:loopback?name=soft-cm-a&fabric=soft-cm");
                b = Verbs.createDevice("soft:loopback?name=soft-cm-b&fabric=soft-cm");
                InetAddress ia;
                InetAddress ib;
                try (Context ca = a.open(); Context cb = b.open()) {
                    ia = ca.queryGid(1, GID_INDEX).toInetAddress();
                    ib = cb.queryGid(1, GID_INDEX).toInetAddress();
                }
                connector = new CmQpConnector(ib, ia);
            }
        }

        @Override
        public String name() {
            return "loopback-cm";
        }

        @Override
        public String description() {
            return "soft-cm-a and soft-cm-b on an in-process fabric; RC pairs connected by the CM (REQ/REP/RTU over"
                    + " QP1, the QPs moved with rdma_init_qp_attr), UC and UD by modify_qp";
        }

        @Override
        public Set<Capability> capabilities() {
            return EnumSet.of(RELIABLE_LINK, SELF_LOOPBACK, HOP_LIMIT_AND_CLASS);
        }

        @Override
        public Context open() {
            make();
            return a.open();
        }

        @Override
        public Context openPeer() {
            make();
            return b.open();
        }

        @Override
        public int gidIndex(Context c) {
            return GID_INDEX;
        }

        @Override
        public QpConnector qpConnector() {
            make();
            return connector;
        }

        @Override
        public String toString() {
            return name();
        }
    }
}
