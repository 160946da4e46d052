// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

/** A verbs object backed by a key table entry (the soft device's MemoryRegion and MemoryWindow). */
public interface KeyHolder {
    MemKey memKey();
}
