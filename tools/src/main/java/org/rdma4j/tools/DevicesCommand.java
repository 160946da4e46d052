// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.Verbs;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code rdma4j devices}: the RDMA devices and their node GUIDs, in exactly the layout of rdma-core's
 * {@code ibv_devices}, so scripts that parse one parse the other.
 */
@Command(name = "devices", mixinStandardHelpOptions = true,
        description = "List RDMA devices and their node GUIDs (like ibv_devices).")
public final class DevicesCommand implements Callable<Integer> {
    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        out.printf("    %-16s\t   node GUID\n", "device");
        out.printf("    %-16s\t----------------\n", "------");
        for (Device d : Verbs.devices()) {
            // Device.guid() is already the value ibv_devices prints (be64toh of the big-endian GUID).
            out.printf("    %-16s\t%016x\n", d.name(), d.guid());
        }
        out.flush();
        return 0;
    }
}
