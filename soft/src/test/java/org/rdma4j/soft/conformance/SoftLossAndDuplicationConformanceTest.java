package org.rdma4j.soft.conformance;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterAll;
import org.rdma4j.conformance.LossAndDuplicationConformanceTest;
import org.rdma4j.soft.link.FaultyLink;
import org.rdma4j.verbs.Context;

/** RC over two soft devices whose links lose, duplicate, reorder and corrupt packets. */
class SoftLossAndDuplicationConformanceTest extends LossAndDuplicationConformanceTest {
    @Override
    protected Context openContext() {
        return SoftFixture.openLossy();
    }

    @Override
    protected Context openPeerContext() {
        return SoftFixture.openLossyPeer();
    }

    /** A fault suite that saw no faults proves nothing. */
    @AfterAll
    static void faultsReallyHappened() {
        for (FaultyLink l : new FaultyLink[] {SoftFixture.linkA, SoftFixture.linkB}) {
            assertTrue(l != null, "the lossy devices were never opened");
            assertTrue(l.lost() > 0 && l.duplicated() > 0 && l.reordered() > 0, () -> "too few faults: lost "
                    + l.lost() + ", duplicated " + l.duplicated() + ", reordered " + l.reordered());
        }
    }
}
