// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.cm;

import org.junit.jupiter.api.BeforeAll;

/** {@link CmMulticastCases} on two soft devices of the in-process fabric. */
class CmMulticastTest extends CmMulticastCases {
    @BeforeAll
    static void devices() {
        setUpDevices("cmm");
    }
}
