// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.VerbsException;

/** The soft device's own refusals about the memory to register, beyond the rules every provider shares. */
class SoftMrMemoryTest {
    private Device dev;
    private Context ctx;
    private ProtectionDomain pd;

    @BeforeEach
    void open() {
        dev = SoftDevices.createLoopback("mr-memory");
        ctx = dev.open();
        pd = ctx.allocPd();
    }

    @AfterEach
    void close() {
        pd.close();
        ctx.close();
        SoftDevices.remove(dev);
    }

    @Test
    void confinedArenaMemoryIsEinvalAndTheMessageRecommendsOnlyNativeArenas() {
        try (Arena confined = Arena.ofConfined(); Arena shared = Arena.ofShared()) {
            MemorySegment mine = confined.allocate(4096, 4096);
            VerbsException e = assertThrows(VerbsException.class, () -> pd.regMr(mine, Access.LOCAL_WRITE));
            assertEquals(Errno.EINVAL, e.errno());
            assertTrue(e.getMessage().contains("Arena.ofShared()"), e.getMessage());
            assertFalse(e.getMessage().contains("heap"), e.getMessage());
            try (MemoryRegion mr = pd.regMr(shared.allocate(4096, 4096), Access.LOCAL_WRITE)) {
                VerbsException r = assertThrows(VerbsException.class,
                        () -> mr.rereg(MemoryRegion.ReregFlag.CHANGE_TRANSLATION, null, mine, 0));
                assertEquals(e.getMessage().replace("ibv_reg_mr", "ibv_rereg_mr"), r.getMessage());
            }
        }
    }
}
