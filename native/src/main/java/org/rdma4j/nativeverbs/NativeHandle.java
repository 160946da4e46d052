// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

import java.lang.foreign.MemorySegment;

/** A Java object of this provider that stands for a libibverbs object: {@link #handle()} is its C pointer. */
interface NativeHandle {
    /** The {@code struct ibv_* *} this object wraps. */
    MemorySegment handle();
}
