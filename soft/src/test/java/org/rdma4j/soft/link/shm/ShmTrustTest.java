// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.packet.PacketPool;
import org.rdma4j.soft.link.udp.UdpLink;
import org.rdma4j.verbs.Gid;

/**
 * Ring files another local user could have put in place (a squatter): a sender never maps one, and a
 * receiver that finds one where its own ring goes reports it (AUTO) or fails (SHM). All in a private
 * directory the test makes; the owner check runs against a uid that is not this process's.
 */
class ShmTrustTest {
    @TempDir
    Path dir;

    private static final ShmRingFiles MINE = ShmRingFiles.FOR_THIS_PROCESS;

    /** A live ring file of this process for the device {@code gid}/{@code port} (the squatter's bait). */
    private static ShmRing ringOf(Path f, Gid gid, int port) throws IOException {
        return ShmRing.create(f, ShmRingTest.me(gid.bytes(), port), 1, 2, 8);
    }

    @Test
    void aSenderRefusesARingFileThatIsASymbolicLink() throws IOException {
        Gid g = Gid.of(InetAddress.getByName("127.0.0.101"));
        Path real = dir.resolve("elsewhere.ring");
        Path link = ShmLink.fileFor(dir, g, 4791);
        try (ShmRing r = ringOf(real, g, 4791)) {
            Files.createSymbolicLink(link, real);
            IOException e = assertThrows(ShmRingFiles.Untrusted.class, () -> ShmRing.open(link, MINE, g.bytes(), 4791));
            assertTrue(e.getMessage().contains("symbolic link"), e::getMessage);
        }
    }

    @Test
    void aSenderRefusesARingFileOfAnotherMode() throws IOException {
        Gid g = Gid.of(InetAddress.getByName("127.0.0.101"));
        Path f = ShmLink.fileFor(dir, g, 4791);
        try (ShmRing r = ringOf(f, g, 4791)) {
            ShmRing.open(f, MINE, g.bytes(), 4791).close(); // 0600 and ours: used
            Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-rw-rw-"));
            IOException e = assertThrows(ShmRingFiles.Untrusted.class, () -> ShmRing.open(f, MINE, g.bytes(), 4791));
            assertTrue(e.getMessage().contains("mode 666"), e::getMessage);
        }
    }

    @Test
    void aSenderRefusesARingFileOfAnotherUser() throws IOException {
        Gid g = Gid.of(InetAddress.getByName("127.0.0.101"));
        Path f = ShmLink.fileFor(dir, g, 4791);
        assertTrue(ShmRingFiles.PROCESS_UID >= 0, "the process's uid is known here");
        try (ShmRing r = ringOf(f, g, 4791)) {
            ShmRingFiles someoneElse = new ShmRingFiles(ShmRingFiles.PROCESS_UID + 1);
            IOException e = assertThrows(ShmRingFiles.Untrusted.class, () -> ShmRing.open(f, someoneElse, g.bytes(), 4791));
            assertTrue(e.getMessage().contains("belongs to uid " + ShmRingFiles.PROCESS_UID), e::getMessage);
        }
    }

    @Test
    void aSenderRefusesARingWhoseHeaderNamesAnotherDevice() throws IOException {
        Gid g = Gid.of(InetAddress.getByName("127.0.0.101"));
        Gid other = Gid.of(InetAddress.getByName("127.0.0.102"));
        Path f = ShmLink.fileFor(dir, g, 4791);
        try (ShmRing r = ringOf(f, other, 4791)) {
            assertThrows(ShmRingFiles.Untrusted.class, () -> ShmRing.open(f, MINE, g.bytes(), 4791));
        }
        try (ShmRing r = ringOf(f, g, 4792)) {
            assertThrows(ShmRingFiles.Untrusted.class, () -> ShmRing.open(f, MINE, g.bytes(), 4791), "another port");
        }
    }

    /**
     * A squatter's file (mode 0666, a live pid, the right header) where a receiver's ring belongs: the
     * sender does not map it and reaches the receiver over UDP, counted; the squatter gets nothing.
     */
    @Test
    void aSenderReachesAReceiverOverUdpPastASquattedRingAndCountsIt() throws Exception {
        InetAddress a = InetAddress.getByName("127.0.0.103");
        InetAddress b = InetAddress.getByName("127.0.0.104");
        int port = SoftDevices.freeUdpPort(36791, a, b);
        Path f = ShmLink.fileFor(dir, Gid.of(b), port);
        ShmLinkTest.Collect sinkB = new ShmLinkTest.Collect();
        try (ShmRing squatter = ringOf(f, Gid.of(b), port);
             ShmLink la = ShmLink.open(a, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.AUTO,
                     new ShmLinkTest.Collect(), dir, MINE);
             UdpLink lb = UdpLink.open(b, port, UdpLink.Mode.AUTO, sinkB)) {
            Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-rw-rw-"));
            la.send(ShmLinkTest.sendOnlyPacket(new PacketPool(), Gid.of(a), Gid.of(b), new byte[] {42}));
            byte[] got = sinkB.got.poll(10, TimeUnit.SECONDS);
            assertTrue(got != null && got[0] == 42, () -> "counters " + la.counters());
            assertEquals(1, la.counters().get("shm_untrusted_rings"));
            assertEquals(0, la.shmSentPackets());
            ShmRingTest.Recorder rec = new ShmRingTest.Recorder();
            squatter.consume(rec, 10);
            assertEquals(0, rec.packets.size(), "the squatter received nothing");
        }
    }

    /** The same squatter on the receiver's side: AUTO reports it (a counter, a warning); SHM fails to open. */
    @Test
    void aReceiverThatFindsASquattedRingReportsItUnderAutoAndFailsUnderShm() throws Exception {
        InetAddress b = InetAddress.getByName("127.0.0.105");
        int port = SoftDevices.freeUdpPort(36891, b);
        Path f = ShmLink.fileFor(dir, Gid.of(b), port);
        try (ShmRing squatter = ringOf(f, Gid.of(b), port)) {
            Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-rw-rw-"));
            try (ShmLink lb = ShmLink.open(b, port, port, UdpLink.Mode.AUTO, ShmLink.Policy.AUTO,
                    new ShmLinkTest.Collect(), dir, MINE)) {
                assertNull(lb.ringFile());
                assertEquals(1, lb.counters().get("shm_ring_failures"));
            }
            IOException e = assertThrows(IOException.class, () -> ShmLink.open(b, port, port, UdpLink.Mode.AUTO,
                    ShmLink.Policy.SHM, new ShmLinkTest.Collect(), dir, MINE));
            assertTrue(e.getMessage().contains(f.toString()) && e.getMessage().contains("EACCES")
                    && e.getMessage().contains("rdma4j.shm.dir"), e::getMessage);
            assertTrue(Files.exists(f), "another's file is left alone");
        }
        Path g = ShmLink.fileFor(dir, Gid.of(b), port);
        Files.createSymbolicLink(g, dir.resolve("target"));
        IOException e = assertThrows(IOException.class, () -> ShmLink.open(b, port, port, UdpLink.Mode.AUTO,
                ShmLink.Policy.SHM, new ShmLinkTest.Collect(), dir, MINE));
        assertTrue(e.getMessage().contains("ELOOP"), e::getMessage);
        assertTrue(!Files.exists(dir.resolve("target")), "nothing was created through the link");
    }
}
