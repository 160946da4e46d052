// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MwType;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.SrqAttr;
import org.rdma4j.verbs.VerbsResource;

/** SEMANTICS.md, Control path, "PD". */
@Rule({"S-PD-1", "S-PD-2"})
public class ProtectionDomainConformanceTest extends AbstractVerbsTest {

    /** The kinds of resource that keep a PD alive. */
    public enum PdUser { MR, QP, SRQ, AH, MW_TYPE_1, MW_TYPE_2 }

    @Test
    void allocDeallocRepeatedlyAlwaysWorks() {
        for (int i = 0; i < 200; i++) {
            ProtectionDomain pd = ctx.allocPd();
            assertFalse(pd.isClosed());
            pd.close();
            assertTrue(pd.isClosed());
        }
    }

    @Test
    void manyPdsCanBeAliveAtOnce() {
        List<ProtectionDomain> pds = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            pds.add(allocPd(ctx));
        }
        for (int i = 1; i < pds.size(); i++) {
            assertNotSame(pds.get(i - 1), pds.get(i));
        }
        pds.forEach(ProtectionDomain::close);
        pds.forEach(pd -> assertTrue(pd.isClosed()));
    }

    @Test
    void pdBelongsToItsContext() {
        try (ProtectionDomain pd = ctx.allocPd()) {
            assertSame(ctx, pd.context());
        }
    }

    private VerbsResource use(ProtectionDomain pd, PdUser kind) {
        return switch (kind) {
            case MR -> pd.regMr(allocate(PAGE_SIZE), Access.LOCAL_WRITE);
            case QP -> pd.createQp(new QpInitAttr(QpType.RC, createCq(ctx, 4), createCq(ctx, 4)));
            case SRQ -> pd.createSrq(new SrqAttr(16, 1, 0));
            case AH -> pd.createAh(AhAttr.roce(ctx.queryGid(1, gidIndex(ctx)), gidIndex(ctx)));
            case MW_TYPE_1 -> pd.allocMw(MwType.TYPE_1);
            case MW_TYPE_2 -> pd.allocMw(MwType.TYPE_2);
        };
    }

    @ParameterizedTest
    @EnumSource(PdUser.class)
    void deallocWhileInUseFailsEbusy(PdUser kind) {
        ProtectionDomain pd = allocPd(ctx);
        VerbsResource user = track(use(pd, kind));
        assertErrno(Errno.EBUSY, pd::close);
        assertFalse(pd.isClosed(), "a refused dealloc leaves the PD alive");
        user.close();
        pd.close();
        assertTrue(pd.isClosed());
    }

    @ParameterizedTest
    @EnumSource(PdUser.class)
    void pdStillWorksAfterRefusedDealloc(PdUser kind) {
        ProtectionDomain pd = allocPd(ctx);
        track(use(pd, kind));
        assertErrno(Errno.EBUSY, pd::close);
        track(pd.regMr(allocate(PAGE_SIZE), Access.LOCAL_WRITE));
        track(pd.allocMw(MwType.TYPE_2));
    }
}
