// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import org.rdma4j.soft.engine.QpEngine;
import org.rdma4j.verbs.Context;

/** What tests outside this package may see of a soft device's insides. */
public final class SoftInternals {
    private SoftInternals() {}

    /** Keys in the device's key table plus QPs registered in it (leak checks). */
    public static long keysAndQps(Context c) {
        SoftContext sc = (SoftContext) c;
        long n = sc.hca.keys.size();
        for (QpEngine ignored : sc.hca.allQps()) {
            n++;
        }
        return n;
    }
}
