// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.cli;

import picocli.CommandLine.IModelTransformer;
import picocli.CommandLine.Model.CommandSpec;

/**
 * getopt lets an option be given twice (the last value wins, -e counts): so do the commands that take
 * this transformer ({@code modelTransformer = GetoptLike.class}), as the C tools they copy.
 */
public final class GetoptLike implements IModelTransformer {
    @Override
    public CommandSpec transform(CommandSpec commandSpec) {
        commandSpec.parser().overwrittenOptionsAllowed(true);
        return commandSpec;
    }
}
