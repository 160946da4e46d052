// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.study;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code rdma4j study pingpong|regcost|latency}: the seeds' measurements, reproduced on any device rdma4j sees. */
@Command(name = "study", mixinStandardHelpOptions = true, exitCodeOnInvalidInput = 2,
        description = {"Studies of what RDMA costs (ping-pong variants, memory registration, latency distributions), "
                + "measured on the devices rdma4j sees.",
            "pingpong: the four ping-pongs of \"Introduction to RDMA Programming\" (round trip and CPU share).",
            "regcost: the cost of registering and deregistering memory, 4 KiB to 1 GiB.",
            "latency: round-trip latency distributions over UDP sockets and RDMA (SEND/RECV, WRITE), busy and blocking."},
        subcommands = {PingpongStudyCommand.class, RegcostCommand.class, LatencyCommand.class})
public final class StudyCommand implements Runnable {
    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(),
                "Missing study: say which one, pingpong, regcost or latency (e.g. 'rdma4j study pingpong').");
    }
}
