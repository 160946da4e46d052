// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rdma4j.soft.CapturedLog;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.link.LinkLog;
import org.rdma4j.soft.link.udp.UdpLink;
import org.rdma4j.verbs.Gid;

/** What the shared-memory link tells an operator on {@code org.rdma4j.soft.link}: a ring fallback. */
class ShmLinkLogTest {
    @TempDir
    Path dir;

    @Test
    void aDeviceThatFallsBackFromTheRingToUdpLogsOneWarningSayingWhy() throws Exception {
        InetAddress b = InetAddress.getByName("127.0.0.107");
        int port = SoftDevices.freeUdpPort(36991, b);
        Path f = ShmLink.fileFor(dir, Gid.of(b), port);
        // another's ring file where this device's must go: AUTO cannot make its own and receives over UDP
        try (CapturedLog log = new CapturedLog(LinkLog.CATEGORY, Level.INFO);
             ShmRing squatter = ShmRing.create(f, ShmRingTest.me(Gid.of(b).bytes(), port), 1, 2, 8)) {
            Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-rw-rw-"));
            try (ShmLink lb = ShmLink.open(b, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.AUTO,
                    new ShmLinkTest.Collect(), dir, ShmRingFiles.FOR_THIS_PROCESS)) {
                assertEquals(1, lb.counters().get("shm_ring_failures"));
            }
            List<String> warnings = log.at(Level.WARNING, "no shared-memory ring for 127.0.0.107 port " + port);
            assertEquals(1, warnings.size(), log.messages());
            assertTrue(warnings.get(0).contains("receives over UDP only"), warnings.get(0));
        }
    }
}
