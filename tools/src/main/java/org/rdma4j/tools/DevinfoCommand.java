// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import org.rdma4j.tools.device.DeviceOptions;
import org.rdma4j.tools.device.GidText;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.DeviceAttr;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.Gid;
import org.rdma4j.verbs.GidEntry;
import org.rdma4j.verbs.LinkLayer;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.PortAttr;
import org.rdma4j.verbs.PortState;
import org.rdma4j.verbs.Verbs;
import org.rdma4j.verbs.VerbsException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code rdma4j devinfo}: device and port attributes in the layout of rdma-core's {@code ibv_devinfo}
 * (same labels, tabs, order and exit codes), so output can be compared line by line with the real tool
 * on rxe or a RoCE NIC. With {@code -v} it adds, after the standard output of each port, the port
 * counters of {@link Context#counters(int)}, which ibv_devinfo does not have.
 */
@Command(name = "devinfo", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Print the attributes of RDMA devices and their ports (like ibv_devinfo).")
public final class DevinfoCommand implements Callable<Integer> {
    /** What ibv_devinfo returns (-1 from main) when the device is not there. */
    static final int EXIT_NO_DEVICE = 255;
    private static final int RC_OPEN_FAILED = 1;
    private static final int RC_QUERY_DEVICE_FAILED = 2;
    private static final int RC_CLOSE_FAILED = 3;
    private static final int RC_BAD_PORT = 4;

    // ibv_device_cap_flags, in the order ibv_devinfo -v decodes them.
    private static final int[] CAP_BITS = {
        1, 1 << 1, 1 << 2, 1 << 3, 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8, 1 << 9, 1 << 10, 1 << 11,
        1 << 12, 1 << 13, 1 << 14, 1 << 17, 1 << 18, 1 << 20, 1 << 21, 1 << 23, 1 << 24, 1 << 25, 1 << 26,
        1 << 29};
    private static final String[] CAP_NAMES = {
        "RESIZE_MAX_WR", "BAD_PKEY_CNTR", "BAD_QKEY_CNTR", "RAW_MULTI", "AUTO_PATH_MIG", "CHANGE_PHY_PORT",
        "UD_AV_PORT_ENFORCE", "CURR_QP_STATE_MOD", "SHUTDOWN_PORT", "INIT_TYPE", "PORT_ACTIVE_EVENT",
        "SYS_IMAGE_GUID", "RC_RNR_NAK_GEN", "SRQ_RESIZE", "N_NOTIFY_CQ", "MEM_WINDOW", "UD_IP_CSUM", "XRC",
        "MEM_MGT_EXTENSIONS", "MEM_WINDOW_TYPE_2A", "MEM_WINDOW_TYPE_2B", "RC_IP_CSUM", "RAW_IP_CSUM",
        "MANAGED_FLOW_STEERING"};

    @Spec
    private CommandSpec spec;

    @Option(names = {"-d", "--ib-dev"}, paramLabel = "<dev>",
            description = "use IB device <dev> (default all devices)")
    private String deviceName;

    @Option(names = {"-i", "--ib-port"}, paramLabel = "<port>",
            description = "use port <port> of IB device (default all ports)")
    private int port;

    @Option(names = {"-l", "--list"}, description = "print only the IB devices names")
    private boolean list;

    @Option(names = {"-v", "--verbose"}, description = "print all the attributes of the IB device(s)")
    private boolean verbose;

    private PrintWriter out;
    private PrintWriter err;

    @Override
    public Integer call() {
        out = spec.commandLine().getOut();
        err = spec.commandLine().getErr();
        try {
            return run();
        } finally {
            out.flush();
            err.flush();
        }
    }

    @picocli.CommandLine.Mixin
    private DeviceOptions deviceOptions;

    private int run() {
        if (deviceOptions.bindAddress() != null) {
            deviceName = deviceOptions.resolve(deviceName).name();
            try {
                return runOnDevices();
            } finally {
                deviceOptions.release();
            }
        }
        return runOnDevices();
    }

    private int runOnDevices() {
        if (spec.commandLine().getParseResult().hasMatchedOption("-i") && port <= 0) {
            throw new ParameterException(spec.commandLine(),
                    "Invalid value for option '--ib-port': " + port + " (ports are numbered from 1)");
        }
        List<Device> devices = Verbs.devices();
        if (list) {
            out.printf("%d HCA%s found:\n", devices.size(), devices.size() != 1 ? "s" : "");
            for (Device d : devices) {
                out.printf("\t%s\n", d.name());
            }
            out.print("\n");
            return 0;
        }
        if (deviceName != null) {
            for (Device d : devices) {
                if (d.name().equals(deviceName)) {
                    return printHcaCap(d);
                }
            }
            err.printf("IB device '%s' wasn't found\n", deviceName);
            return EXIT_NO_DEVICE;
        }
        if (devices.isEmpty()) {
            err.print("No IB devices found\n");
            return EXIT_NO_DEVICE;
        }
        int rc = 0;
        for (Device d : devices) {
            rc |= printHcaCap(d);
        }
        return rc;
    }

    private int printHcaCap(Device device) {
        Context ctx;
        try {
            ctx = device.open();
        } catch (VerbsException e) {
            err.print("Failed to open device\n");
            return RC_OPEN_FAILED;
        }
        int rc = printHcaCap(ctx, device);
        try {
            ctx.close();
        } catch (VerbsException e) {
            err.print("Failed to close device\n");
            rc = RC_CLOSE_FAILED;
        }
        return rc;
    }

    private int printHcaCap(Context ctx, Device device) {
        DeviceAttr attr;
        try {
            attr = ctx.queryDevice();
        } catch (VerbsException e) {
            err.print("Failed to query device props\n");
            return RC_QUERY_DEVICE_FAILED;
        }
        if (port != 0 && port > attr.physPortCnt()) {
            err.print("Invalid port requested for device\n");
            return RC_BAD_PORT;
        }
        printDevice(device, attr);
        if (verbose) {
            printDeviceLimits(attr);
        }
        for (int p = 1; p <= attr.physPortCnt(); p++) {
            if (port != 0 && p != port) {
                continue;
            }
            int rc = printPort(ctx, p);
            if (rc != 0) {
                return rc;
            }
        }
        return 0;
    }

    private void printDevice(Device device, DeviceAttr attr) {
        out.printf("hca_id:\t%s\n", device.name());
        out.printf("\ttransport:\t\t\t%s\n", device.transportName());
        if (attr.fwVer() != null && !attr.fwVer().isEmpty()) {
            out.printf("\tfw_ver:\t\t\t\t%s\n", attr.fwVer());
        }
        out.printf("\tnode_guid:\t\t\t%s\n", guid(attr.nodeGuid()));
        out.printf("\tsys_image_guid:\t\t\t%s\n", guid(attr.sysImageGuid()));
        out.printf("\tvendor_id:\t\t\t0x%04x\n", attr.vendorId());
        out.printf("\tvendor_part_id:\t\t\t%d\n", attr.vendorPartId());
        out.printf("\thw_ver:\t\t\t\t0x%X\n", attr.hwVer());
        out.printf("\tphys_port_cnt:\t\t\t%d\n", attr.physPortCnt());
    }

    private void printDeviceLimits(DeviceAttr a) {
        out.printf("\tmax_mr_size:\t\t\t0x%x\n", a.maxMrSize());
        out.printf("\tpage_size_cap:\t\t\t0x%x\n", a.pageSizeCap());
        out.printf("\tmax_qp:\t\t\t\t%d\n", a.maxQp());
        out.printf("\tmax_qp_wr:\t\t\t%d\n", a.maxQpWr());
        out.printf("\tdevice_cap_flags:\t\t0x%08x\n", a.deviceCapFlags());
        printCapFlags(a.deviceCapFlags());
        out.printf("\tmax_sge:\t\t\t%d\n", a.maxSge());
        out.printf("\tmax_sge_rd:\t\t\t%d\n", a.maxSgeRd());
        out.printf("\tmax_cq:\t\t\t\t%d\n", a.maxCq());
        out.printf("\tmax_cqe:\t\t\t%d\n", a.maxCqe());
        out.printf("\tmax_mr:\t\t\t\t%d\n", a.maxMr());
        out.printf("\tmax_pd:\t\t\t\t%d\n", a.maxPd());
        out.printf("\tmax_qp_rd_atom:\t\t\t%d\n", a.maxQpRdAtom());
        out.printf("\tmax_ee_rd_atom:\t\t\t%d\n", a.maxEeRdAtom());
        out.printf("\tmax_res_rd_atom:\t\t%d\n", a.maxResRdAtom());
        out.printf("\tmax_qp_init_rd_atom:\t\t%d\n", a.maxQpInitRdAtom());
        out.printf("\tmax_ee_init_rd_atom:\t\t%d\n", a.maxEeInitRdAtom());
        out.printf("\tatomic_cap:\t\t\t%s (%d)\n", a.atomicCap().name(), a.atomicCap().ordinal());
        out.printf("\tmax_ee:\t\t\t\t%d\n", a.maxEe());
        out.printf("\tmax_rdd:\t\t\t%d\n", a.maxRdd());
        out.printf("\tmax_mw:\t\t\t\t%d\n", a.maxMw());
        out.printf("\tmax_raw_ipv6_qp:\t\t%d\n", a.maxRawIpv6Qp());
        out.printf("\tmax_raw_ethy_qp:\t\t%d\n", a.maxRawEthyQp());
        out.printf("\tmax_mcast_grp:\t\t\t%d\n", a.maxMcastGrp());
        out.printf("\tmax_mcast_qp_attach:\t\t%d\n", a.maxMcastQpAttach());
        out.printf("\tmax_total_mcast_qp_attach:\t%d\n", a.maxTotalMcastQpAttach());
        out.printf("\tmax_ah:\t\t\t\t%d\n", a.maxAh());
        out.printf("\tmax_fmr:\t\t\t%d\n", a.maxFmr());
        if (a.maxFmr() != 0) {
            out.printf("\tmax_map_per_fmr:\t\t%d\n", a.maxMapPerFmr());
        }
        out.printf("\tmax_srq:\t\t\t%d\n", a.maxSrq());
        if (a.maxSrq() != 0) {
            out.printf("\tmax_srq_wr:\t\t\t%d\n", a.maxSrqWr());
            out.printf("\tmax_srq_sge:\t\t\t%d\n", a.maxSrqSge());
        }
        out.printf("\tmax_pkeys:\t\t\t%d\n", a.maxPkeys());
        out.printf("\tlocal_ca_ack_delay:\t\t%d\n", a.localCaAckDelay());
        // The ibv_query_device_ex part. rdma4j has none of these features (no ODP, timestamps, TSO, RSS,
        // packet pacing, tag matching, device memory), so they read as a device without them reads.
        out.print("\tgeneral_odp_caps:\n");
        for (String t : new String[] {"rc", "uc", "ud", "xrc"}) {
            out.printf("\t%s_odp_caps:\n", t);
            out.print("\t\t\t\t\tNO SUPPORT\n");
        }
        out.print("\tcompletion_timestamp_mask not supported\n");
        out.print("\tcore clock not supported\n");
        out.printf("\tdevice_cap_flags_ex:\t\t0x%X\n", Integer.toUnsignedLong(a.deviceCapFlags()));
        out.print("\ttso_caps:\n");
        out.print("\t\tmax_tso:\t\t\t0\n");
        out.print("\trss_caps:\n");
        out.print("\t\tmax_rwq_indirection_tables:\t\t\t0\n");
        out.print("\t\tmax_rwq_indirection_table_size:\t\t\t0\n");
        out.print("\t\trx_hash_function:\t\t\t\t0x0\n");
        out.print("\t\trx_hash_fields_mask:\t\t\t\t0x0\n");
        out.print("\tmax_wq_type_rq:\t\t\t0\n");
        out.print("\tpacket_pacing_caps:\n");
        out.print("\t\tqp_rate_limit_min:\t0kbps\n");
        out.print("\t\tqp_rate_limit_max:\t0kbps\n");
        out.print("\ttag matching not supported\n");
        out.printf("\tnum_comp_vectors:\t\t%d\n", a.numCompVectors());
    }

    private void printCapFlags(int flags) {
        int known = 0;
        for (int i = 0; i < CAP_BITS.length; i++) {
            known |= CAP_BITS[i];
            if ((flags & CAP_BITS[i]) != 0) {
                out.printf("\t\t\t\t\t%s\n", CAP_NAMES[i]);
            }
        }
        if ((flags & ~known) != 0) {
            out.printf("\t\t\t\t\tUnknown flags: 0x%X\n", flags & ~known);
        }
    }

    private int printPort(Context ctx, int p) {
        PortAttr pa;
        try {
            pa = ctx.queryPort(p);
        } catch (VerbsException e) {
            err.printf("Failed to query port %d props\n", p);
            return e.errno();
        }
        out.printf("\t\tport:\t%d\n", p);
        out.printf("\t\t\tstate:\t\t\t%s (%d)\n", portState(pa.state()), pa.state().value());
        out.printf("\t\t\tmax_mtu:\t\t%s (%d)\n", mtu(pa.maxMtu()), mtuValue(pa.maxMtu()));
        out.printf("\t\t\tactive_mtu:\t\t%s (%d)\n", mtu(pa.activeMtu()), mtuValue(pa.activeMtu()));
        out.printf("\t\t\tsm_lid:\t\t\t%d\n", pa.smLid());
        out.printf("\t\t\tport_lid:\t\t%d\n", pa.lid());
        out.printf("\t\t\tport_lmc:\t\t0x%02x\n", pa.lmc());
        out.printf("\t\t\tlink_layer:\t\t%s\n", linkLayer(pa.linkLayer()));
        if (verbose) {
            out.printf("\t\t\tmax_msg_sz:\t\t0x%x\n", pa.maxMsgSz() & 0xffff_ffffL);
            out.printf("\t\t\tport_cap_flags:\t\t0x%08x\n", pa.portCapFlags());
            out.print("\t\t\tport_cap_flags2:\t0x0000\n");
            out.printf("\t\t\tmax_vl_num:\t\t%s (%d)\n", vl(pa.maxVlNum()), pa.maxVlNum());
            out.printf("\t\t\tbad_pkey_cntr:\t\t0x%x\n", pa.badPkeyCntr());
            out.printf("\t\t\tqkey_viol_cntr:\t\t0x%x\n", pa.qkeyViolCntr());
            out.printf("\t\t\tsm_sl:\t\t\t%d\n", pa.smSl());
            out.printf("\t\t\tpkey_tbl_len:\t\t%d\n", pa.pkeyTblLen());
            out.printf("\t\t\tgid_tbl_len:\t\t%d\n", pa.gidTblLen());
            out.printf("\t\t\tsubnet_timeout:\t\t%d\n", pa.subnetTimeout());
            out.printf("\t\t\tinit_type_reply:\t%d\n", pa.initTypeReply());
            out.printf("\t\t\tactive_width:\t\t%sX (%d)\n", width(pa.activeWidth()), pa.activeWidth());
            out.printf("\t\t\tactive_speed:\t\t%s (%d)\n", speed(pa.activeSpeed()), pa.activeSpeed());
            // ibv_devinfo prints phys_state for the InfiniBand transport only (RoCE devices report it;
            // an iWARP device such as siw does not get the line).
            if (ctx.device().transportName().startsWith("InfiniBand ")) {
                out.printf("\t\t\tphys_state:\t\t%s (%d)\n", physState(pa.physState()), pa.physState());
            }
            int rc = printGids(ctx, p, pa);
            if (rc != 0) {
                return rc;
            }
            printCounters(ctx, p);
        }
        out.print("\n");
        return 0;
    }

    private int printGids(Context ctx, int p, PortAttr pa) {
        for (int i = 0; i < pa.gidTblLen(); i++) {
            GidEntry e;
            try {
                e = ctx.queryGidEntry(p, i);
            } catch (VerbsException ex) {
                if (ex.errno() == Errno.ENODATA) {
                    continue; // an empty entry: the kernel hands ibv_devinfo a zero GID, which it skips
                }
                err.printf("Failed to query gid to port %d, index %d\n", p, i);
                return ex.errno();
            }
            if (isNullGid(e.gid())) {
                continue;
            }
            String suffix = pa.linkLayer() == LinkLayer.ETHERNET ? ", " + gidType(e.type()) : "";
            String text = e.type() == GidEntry.GidType.ROCE_V2 ? GidText.inetNtop(e.gid()) : GidText.full(e.gid());
            out.printf("\t\t\tGID[%3d]:\t\t%s%s\n", i, text, suffix);
        }
        return 0;
    }

    /** Not part of ibv_devinfo: the port counters, sorted by name. */
    private void printCounters(Context ctx, int p) {
        Map<String, Long> counters = new TreeMap<>(ctx.counters(p));
        out.print("\t\t\tcounters:\n");
        for (Map.Entry<String, Long> c : counters.entrySet()) {
            out.printf("\t\t\t\t%s: %d\n", c.getKey(), c.getValue());
        }
    }

    /** ibv_devinfo's guid_str: the GUID as four groups of four hex digits. */
    static String guid(long guid) {
        return String.format("%04x:%04x:%04x:%04x", (guid >>> 48) & 0xffff, (guid >>> 32) & 0xffff,
                (guid >>> 16) & 0xffff, guid & 0xffff);
    }

    /** ibv_devinfo's null_gid: only the interface-ID half is looked at. */
    private static boolean isNullGid(Gid gid) {
        for (int i = 8; i < Gid.LENGTH; i++) {
            if (gid.byteAt(i) != 0) {
                return false;
            }
        }
        return true;
    }

    private static String gidType(GidEntry.GidType type) {
        // The kernel's sysfs types are "IB/RoCE v1" and "RoCE v2"; ibv_devinfo names the first "RoCE v1".
        return type == GidEntry.GidType.ROCE_V2 ? "RoCE v2" : "RoCE v1";
    }

    private static String portState(PortState s) {
        return switch (s) {
            case DOWN -> "PORT_DOWN";
            case INIT -> "PORT_INIT";
            case ARMED -> "PORT_ARMED";
            case ACTIVE -> "PORT_ACTIVE";
            default -> "invalid state";
        };
    }

    private static String mtu(Mtu m) {
        return m == null ? "invalid MTU" : Integer.toString(m.bytes());
    }

    private static int mtuValue(Mtu m) {
        return m == null ? 0 : m.value();
    }

    private static String linkLayer(LinkLayer l) {
        return switch (l) {
            case UNSPECIFIED -> "Unspecified";
            case INFINIBAND -> "InfiniBand";
            case ETHERNET -> "Ethernet";
        };
    }

    private static String vl(int vlNum) {
        return switch (vlNum) {
            case 1 -> "1";
            case 2 -> "2";
            case 3 -> "4";
            case 4 -> "8";
            case 5 -> "15";
            default -> "invalid value";
        };
    }

    private static String width(int w) {
        return switch (w) {
            case 1 -> "1";
            case 2 -> "4";
            case 4 -> "8";
            case 8 -> "12";
            case 16 -> "2";
            default -> "invalid width";
        };
    }

    private static String speed(int s) {
        return switch (s) {
            case 1 -> "2.5 Gbps";
            case 2 -> "5.0 Gbps";
            case 4, 8 -> "10.0 Gbps";
            case 16 -> "14.0 Gbps";
            case 32 -> "25.0 Gbps";
            case 64 -> "50.0 Gbps";
            case 128 -> "100.0 Gbps";
            case 256 -> "200.0 Gbps";
            default -> "invalid speed";
        };
    }

    private static String physState(int s) {
        return switch (s) {
            case 1 -> "SLEEP";
            case 2 -> "POLLING";
            case 3 -> "DISABLED";
            case 4 -> "PORT_CONFIGURATION TRAINNING";
            case 5 -> "LINK_UP";
            case 6 -> "LINK_ERROR_RECOVERY";
            case 7 -> "PHY TEST";
            default -> "invalid physical state";
        };
    }
}
