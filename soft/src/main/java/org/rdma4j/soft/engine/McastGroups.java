// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import java.util.concurrent.ConcurrentHashMap;
import org.rdma4j.soft.link.Link;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.VerbsException;

/**
 * A device's multicast groups (rxe_mcast.c): the QPs attached to each group, kept as arrays replaced
 * on change (copy on write) so that delivery reads them without locks, and the device's limits on
 * groups and attachments. The link joins a group with its first QP and leaves it with its last.
 */
final class McastGroups {
    private final Hca hca;
    /** Group to attached QPs; an array is never changed once published. */
    private final ConcurrentHashMap<Gid, QpEngine[]> groups = new ConcurrentHashMap<>();
    /** QP attachments over all groups (guarded by {@code groups}). */
    private int attachments;

    McastGroups(Hca hca) {
        this.hca = hca;
    }

    /** The QPs attached to {@code group}, or null when none is (any thread, without locks). */
    QpEngine[] members(Gid group) {
        return groups.get(group);
    }

    /**
     * Attaches {@code qp} to multicast {@code group} (nothing if it is already): checks the device's
     * limits in rxe's order (groups, then attachments in all, then QPs in this group) and joins the
     * group on the link when it is new here. ENOMEM past a limit; the link's failure as EINVAL.
     */
    void attach(Gid group, QpEngine qp, int maxGroups, int maxTotal, int maxPerGroup) {
        synchronized (groups) {
            QpEngine[] members = groups.get(group);
            if (members != null) {
                for (QpEngine m : members) {
                    if (m == qp) {
                        return;
                    }
                }
            }
            if (members == null && groups.size() >= maxGroups) {
                throw new VerbsException(Errno.ENOMEM, hca.name + " already has max_mcast_grp " + maxGroups
                        + " multicast groups");
            }
            if (attachments >= maxTotal) {
                throw new VerbsException(Errno.ENOMEM, hca.name + " already has max_total_mcast_qp_attach "
                        + maxTotal + " multicast attachments");
            }
            if (members != null && members.length >= maxPerGroup) {
                throw new VerbsException(Errno.ENOMEM, "group " + group + " already has max_mcast_qp_attach "
                        + maxPerGroup + " QPs");
            }
            if (members == null) {
                Link l = hca.link();
                try {
                    if (l == null) {
                        throw new java.io.IOException("the device has no link");
                    }
                    l.joinGroup(group);
                } catch (java.io.IOException e) {
                    throw new VerbsException(Errno.EINVAL, "cannot join multicast group " + group + ": "
                            + e.getMessage());
                }
                members = new QpEngine[0];
            }
            QpEngine[] more = java.util.Arrays.copyOf(members, members.length + 1);
            more[members.length] = qp;
            groups.put(group, more);
            attachments++;
        }
    }

    /** Detaches {@code qp} from {@code group}; false if it was not attached. Leaves the group when empty. */
    boolean detach(Gid group, QpEngine qp) {
        synchronized (groups) {
            QpEngine[] members = groups.get(group);
            if (members == null) {
                return false;
            }
            QpEngine[] fewer = java.util.Arrays.stream(members).filter(m -> m != qp).toArray(QpEngine[]::new);
            if (fewer.length == members.length) {
                return false;
            }
            attachments--;
            if (fewer.length == 0) {
                groups.remove(group);
                Link l = hca.link();
                if (l != null) {
                    l.leaveGroup(group);
                }
            } else {
                groups.put(group, fewer);
            }
            return true;
        }
    }
}
