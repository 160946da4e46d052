// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.nativeverbs;

/** What a failed {@code invokeExact} of a downcall becomes: the downcall handles throw only unchecked errors. */
final class Downcalls {
    private Downcalls() {}

    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new IllegalStateException("unexpected checked exception from a downcall", t);
    }
}
