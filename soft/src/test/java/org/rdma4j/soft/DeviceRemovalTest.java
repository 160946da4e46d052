// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;

/** SoftDevices.remove: refused (EBUSY) while a context on the device is open, final once done. */
class DeviceRemovalTest {
    @Test
    void removingADeviceWithAnOpenContextIsRefusedEbusyAndTheDeviceKeepsWorking() {
        Device d = SoftDevices.createLoopback("removal-busy");
        Context c = d.open();
        VerbsException e = assertThrows(VerbsException.class, () -> SoftDevices.remove(d));
        assertEquals(Errno.EBUSY, e.errno(), e::getMessage);
        ProtectionDomain pd = c.allocPd(); // still there, still working
        pd.close();
        assertTrue(Verbs.devices().stream().anyMatch(x -> x.name().equals("removal-busy")), "still listed");
        c.close();
        SoftDevices.remove(d);
        assertTrue(Verbs.devices().stream().noneMatch(x -> x.name().equals("removal-busy")), "gone");
        VerbsException reopen = assertThrows(VerbsException.class, d::open);
        assertEquals(Errno.ENODEV, reopen.errno(), reopen::getMessage);
    }

    @Test
    void aRemovedNameCanBeCreatedAgain() {
        Device d = SoftDevices.createLoopback("removal-again");
        SoftDevices.remove(d);
        Device again = SoftDevices.createLoopback("removal-again");
        try (Context c = again.open()) {
            c.allocPd().close();
        }
        SoftDevices.remove(again);
    }
}
