// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import org.rdma4j.soft.engine.Hca;
import org.rdma4j.verbs.Gid;

/**
 * What the soft device tells an operator about devices, on the {@code System.Logger} category
 * {@value #CATEGORY}: a device up (INFO, with its link and addresses), its port going down or up
 * (WARNING / INFO), a device removed (INFO). Never on the data path. Thread safe.
 */
final class SoftLog {
    /** The logger category of the soft device and its engine. */
    static final String CATEGORY = "org.rdma4j.soft";
    private static final Logger LOG = System.getLogger(CATEGORY);

    private SoftLog() {
    }

    static void deviceUp(String name, Hca hca) {
        if (!LOG.isLoggable(Level.INFO)) {
            return;
        }
        StringBuilder gids = new StringBuilder();
        for (int i = 0; i < 4; i++) {
            Gid g = hca.gid(i);
            if (g != null) {
                gids.append(gids.isEmpty() ? "" : ", ").append(g);
            }
        }
        var link = hca.link();
        LOG.log(Level.INFO, "soft device " + name + " up: link " + (link == null ? "none" : link.getClass().getSimpleName())
                + ", GIDs " + gids);
    }

    static void portState(String name, boolean up) {
        Level level = up ? Level.INFO : Level.WARNING;
        if (LOG.isLoggable(level)) {
            LOG.log(level, "soft device " + name + " port 1 " + (up ? "up (PORT_ACTIVE)" : "down (PORT_ERR): it "
                    + "drops every packet until it comes back"));
        }
    }

    static void removed(String name) {
        if (LOG.isLoggable(Level.INFO)) {
            LOG.log(Level.INFO, "soft device " + name + " removed");
        }
    }
}
