// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.rdma4j.nativeverbs.abi.DeviceConstants;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.AsyncEventType;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.GidEntry;
import org.rdma4j.verbs.LinkLayer;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.PortState;

/** The API's enums and bit sets are passed to and read from C by value: they must agree with verbs.h (which the probe checks the constants against). */
class AbiMappingTest {
    @Test
    void enumValuesAreTheCValues() {
        assertEquals(DeviceConstants.IBV_PORT_ACTIVE, PortState.ACTIVE.value());
        assertEquals(DeviceConstants.IBV_PORT_ACTIVE_DEFER, PortState.ACTIVE_DEFER.value());
        assertEquals(PortState.ACTIVE, NativeContext.portState(DeviceConstants.IBV_PORT_ACTIVE));
        assertEquals(Mtu.MTU_4096, NativeContext.mtu(DeviceConstants.IBV_MTU_4096));
        assertEquals(LinkLayer.ETHERNET, NativeContext.linkLayer(DeviceConstants.IBV_LINK_LAYER_ETHERNET));
        assertEquals(LinkLayer.INFINIBAND, NativeContext.linkLayer(DeviceConstants.IBV_LINK_LAYER_INFINIBAND));
        assertEquals(DeviceConstants.IBV_EVENT_WQ_FATAL, AsyncEventType.WQ_FATAL.value());
        assertEquals(DeviceConstants.IBV_EVENT_GID_CHANGE, AsyncEventType.GID_CHANGE.value());
        assertEquals(DeviceConstants.IBV_EVENT_SRQ_LIMIT_REACHED, AsyncEventType.SRQ_LIMIT_REACHED.value());
        assertEquals(DeviceConstants.IBV_GID_TYPE_ROCE_V2, GidEntry.GidType.ROCE_V2.ordinal());
        assertEquals(DeviceConstants.IBV_ATOMIC_GLOB, DeviceAttr.AtomicCap.ATOMIC_GLOB.ordinal());
    }

    @Test
    void bitsAreTheCBits() {
        assertEquals(DeviceConstants.IBV_ACCESS_LOCAL_WRITE, Access.LOCAL_WRITE);
        assertEquals(DeviceConstants.IBV_ACCESS_REMOTE_WRITE, Access.REMOTE_WRITE);
        assertEquals(DeviceConstants.IBV_ACCESS_REMOTE_READ, Access.REMOTE_READ);
        assertEquals(DeviceConstants.IBV_ACCESS_REMOTE_ATOMIC, Access.REMOTE_ATOMIC);
        assertEquals(DeviceConstants.IBV_ACCESS_MW_BIND, Access.MW_BIND);
        assertEquals(DeviceConstants.IBV_ACCESS_ZERO_BASED, Access.ZERO_BASED);
        assertEquals(DeviceConstants.IBV_ACCESS_ON_DEMAND, Access.ON_DEMAND);
        assertEquals(DeviceConstants.IBV_REREG_MR_CHANGE_TRANSLATION, MemoryRegion.ReregFlag.CHANGE_TRANSLATION);
        assertEquals(DeviceConstants.IBV_REREG_MR_CHANGE_PD, MemoryRegion.ReregFlag.CHANGE_PD);
        assertEquals(DeviceConstants.IBV_REREG_MR_CHANGE_ACCESS, MemoryRegion.ReregFlag.CHANGE_ACCESS);
    }
}
