// SPDX-License-Identifier: Apache-2.0
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
        assertEquals(Errno.EINVAL, errno(() -> MrAccessRules.check(Access.REMOTE_WRITE)));
        assertEquals(Errno.EINVAL, errno(() -> MrAccessRules.check(Access.REMOTE_ATOMIC | Access.REMOTE_READ)));
        assertDoesNotThrow(() -> MrAccessRules.check(Access.REMOTE_WRITE | Access.LOCAL_WRITE));
        assertDoesNotThrow(() -> MrAccessRules.check(Access.REMOTE_READ));
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
        assertEquals(Errno.EOPNOTSUPP, errno(() -> MrAccessRules.check(Access.ZERO_BASED)));
        assertEquals(Errno.EOPNOTSUPP, errno(() -> MrAccessRules.check(Access.ON_DEMAND)));
        assertDoesNotThrow(() -> MrAccessRules.check(Access.ZERO_BASED, true, false));
        assertEquals(Errno.EOPNOTSUPP, errno(() -> MrAccessRules.check(Access.ON_DEMAND, true, false)));
        assertDoesNotThrow(() -> MrAccessRules.check(Access.ON_DEMAND, false, true));
    }

    @Test
    void theLocalWriteRuleComesBeforeTheFeatureCheck() {
        // ib_check_mr_access: EINVAL for the missing LOCAL_WRITE even when the feature is also missing
        assertEquals(Errno.EINVAL, errno(() -> MrAccessRules.check(Access.REMOTE_WRITE | Access.ON_DEMAND)));
    }
}
