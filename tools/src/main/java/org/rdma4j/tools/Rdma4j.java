package org.rdma4j.tools;

import java.io.PrintWriter;
import org.rdma4j.verbs.VerbsException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IExecutionExceptionHandler;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * The {@code rdma4j} command. A user error (a bad flag, a device that does not exist, a verbs call
 * refused with an errno) ends with a one-line message and a non-zero exit code, never a stack trace;
 * only a bug in rdma4j itself shows one.
 */
@Command(name = "rdma4j",
        mixinStandardHelpOptions = true,
        versionProvider = Rdma4j.Version.class,
        description = "RDMA verbs for Java: tools for the devices rdma4j sees (the embedded soft RoCEv2 "
                + "device soft0, and more to come).",
        subcommands = {DevicesCommand.class, DevinfoCommand.class, DemoCommand.class, StressCommand.class,
                org.rdma4j.tools.pingpong.PingpongCommand.class, org.rdma4j.tools.perf.PerfCommand.class,
                McastCommand.class, CommandLine.HelpCommand.class})
public final class Rdma4j implements Runnable {
    /** Exit code of a failed verbs call ({@link VerbsException}). */
    public static final int EXIT_VERBS_ERROR = 1;

    @Spec
    private CommandSpec spec;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /**
     * The configured command line (output to {@link CommandLine#getOut()}/{@link CommandLine#getErr()},
     * which tests replace).
     */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Rdma4j());
        cl.setExecutionExceptionHandler(new VerbsErrors());
        cl.setParameterExceptionHandler(Rdma4j::usageError);
        return cl;
    }

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "Missing command: say which one (e.g. 'rdma4j demo').");
    }

    /** A bad command line: the message, picocli's suggestions if it has any, then the usage. */
    private static int usageError(ParameterException ex, String[] args) {
        CommandLine cmd = ex.getCommandLine();
        PrintWriter err = cmd.getErr();
        err.println(ex.getMessage());
        UnmatchedArgumentException.printSuggestions(ex, err);
        cmd.usage(err);
        err.flush();
        return cmd.getCommandSpec().exitCodeOnInvalidInput();
    }

    /** A verbs call that fails is the user's or the device's problem, not a crash: one line, exit 1. */
    private static final class VerbsErrors implements IExecutionExceptionHandler {
        @Override
        public int handleExecutionException(Exception ex, CommandLine cmd, ParseResult parseResult)
                throws Exception {
            for (Throwable t = ex; t != null; t = t.getCause()) {
                if (t instanceof VerbsException ve) {
                    PrintWriter err = cmd.getErr();
                    err.println("rdma4j: " + ve.getMessage());
                    err.flush();
                    return EXIT_VERBS_ERROR;
                }
            }
            throw ex;
        }
    }

    /** The version of the tools module (set by the build), or "dev" when run from classes. */
    public static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Rdma4j.class.getModule().getDescriptor() != null
                    ? Rdma4j.class.getModule().getDescriptor().rawVersion().orElse(null)
                    : null;
            if (v == null) {
                v = Rdma4j.class.getPackage().getImplementationVersion();
            }
            return new String[] {"rdma4j " + (v != null ? v : "dev"),
                    "Java " + Runtime.version() + " (" + System.getProperty("java.vm.name") + ")"};
        }
    }
}
