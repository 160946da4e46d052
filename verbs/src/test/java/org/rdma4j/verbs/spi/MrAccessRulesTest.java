package org.rdma4j.verbs.spi;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

class MrAccessRulesTest {
    private static int errno(Runnable r) {
        return assertThrows(VerbsException.class, r::run).errno();
    }

    @Test
    void remoteWriteOrAtomicWithoutLocalWriteIsEinval() {
        assertEquals(Errno.EINVAL, errno(() -> MrAccessRules.check(Access.REMOTE_WRITE_BIT)));
        assertEquals(Errno.EINVAL, errno(() -> MrAccessRules.check(Access.REMOTE_ATOMIC_BIT | Access.REMOTE_READ_BIT)));
        assertDoesNotThrow(() -> MrAccessRules.check(Access.REMOTE_WRITE_BIT | Access.LOCAL_WRITE_BIT));
        assertDoesNotThrow(() -> MrAccessRules.check(Access.REMOTE_READ_BIT));
        assertDoesNotThrow(() -> MrAccessRules.check(0));
    }

    @Test
    void unknownBitsAreEinval() {
        VerbsException e = assertThrows(VerbsException.class, () -> MrAccessRules.check(1 << 20));
        assertEquals(Errno.EINVAL, e.errno());
        assertEquals("EINVAL: unknown access bits 0x100000", e.getMessage());
    }

    @Test
    void featuresTheDeviceLacksAreEopnotsupp() {
        assertEquals(Errno.EOPNOTSUPP, errno(() -> MrAccessRules.check(Access.ZERO_BASED_BIT)));
        assertEquals(Errno.EOPNOTSUPP, errno(() -> MrAccessRules.check(Access.ON_DEMAND_BIT)));
        assertDoesNotThrow(() -> MrAccessRules.check(Access.ZERO_BASED_BIT, true, false));
        assertEquals(Errno.EOPNOTSUPP, errno(() -> MrAccessRules.check(Access.ON_DEMAND_BIT, true, false)));
        assertDoesNotThrow(() -> MrAccessRules.check(Access.ON_DEMAND_BIT, false, true));
    }

    @Test
    void theLocalWriteRuleComesBeforeTheFeatureCheck() {
        // ib_check_mr_access: EINVAL for the missing LOCAL_WRITE even when the feature is also missing
        assertEquals(Errno.EINVAL, errno(() -> MrAccessRules.check(Access.REMOTE_WRITE_BIT | Access.ON_DEMAND_BIT)));
    }
}
