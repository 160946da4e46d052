// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import org.rdma4j.soft.engine.Hca;
import org.rdma4j.verbs.Gid;

/**
 * What the soft device tells an operator about devices, on the {@code System.Logger} category
 * {@value #CATEGORY}: its port going down (WARNING: it drops every packet until it comes back); a
 * device up with its link and addresses, its port up again, a device removed (DEBUG: java.util.logging
 * prints INFO by default, and a tool's stderr stays its own). Never on the data path. Thread safe.
 */
final class SoftLog {
    /** The logger category of the soft device and its engine. */
    static final String CATEGORY = "org.rdma4j.soft";
    private static final Logger LOG = System.getLogger(CATEGORY);

    private SoftLog() {
    }

    static void deviceUp(String name, Hca hca) {
        if (!LOG.isLoggable(Level.DEBUG)) {
            return;
        }
        StringBuilder gids = new StringBuilder();
        for (int i = 0; i < 4; i++) {
            Gid g = hca.gid(i);
            if (g != null) {
                gids.append(gids.isEmpty() ? "" : ", ").append(g.toInetAddress().getHostAddress());
            }
        }
        var link = hca.link();
        String kind = link == null ? "none" : link.getClass().getName();
        LOG.log(Level.DEBUG, "soft device " + name + " up: link " + kind.substring(kind.lastIndexOf('.') + 1)
                + ", GIDs " + gids);
    }

    static void portState(String name, boolean up) {
        Level level = up ? Level.DEBUG : Level.WARNING;
        if (LOG.isLoggable(level)) {
            LOG.log(level, "soft device " + name + " port 1 " + (up ? "up (PORT_ACTIVE)" : "down (PORT_ERR): it "
                    + "drops every packet until it comes back"));
        }
    }

    static void removed(String name) {
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, "soft device " + name + " removed");
        }
    }
}
