// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.shm;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Set;

/**
 * Opens and creates ring files ({@link ShmRing}) only when they can be trusted: a regular file, never
 * through a symbolic link (O_NOFOLLOW), owned by this process's user and of mode 0600, the same file
 * before and after the open. A file that fails is refused with {@link Untrusted}: another local user
 * may have put it there to receive a peer's traffic (a squatter), so a sender must not map it and a
 * receiver must not silently do without its ring. The residual window (the path swapped between the
 * checks and the open) needs a directory where another user may rename this user's files: /dev/shm
 * is sticky, and a directory set with {@code rdma4j.shm.dir} should be 0700 or sticky. Thread safe.
 */
final class ShmRingFiles {
    /** A ring file that exists but must not be used: why, with the errno it stands for, and what to do. */
    static final class Untrusted extends IOException {
        Untrusted(String message) {
            super(message);
        }
    }

    private static final Set<PosixFilePermission> MODE_0600 = PosixFilePermissions.fromString("rw-------");
    private static final LinkOption[] NOFOLLOW = {LinkOption.NOFOLLOW_LINKS};

    /** This process's (effective) user: the owner of /proc/self; -1 where that is unknown. */
    static final int PROCESS_UID = processUid();

    /** Checks for files of this process's user. */
    static final ShmRingFiles FOR_THIS_PROCESS = new ShmRingFiles(PROCESS_UID);

    private final int uid;
    /** Ring files this process owns: removed at JVM exit even if their device was never closed. */
    private static final Set<Path> OWNED = java.util.concurrent.ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(() -> {
            for (Path f : OWNED) {
                try {
                    Files.deleteIfExists(f);
                } catch (IOException e) {
                    // the next owner's stale check removes it
                }
            }
        }));
    }

    /** Adds {@code file} to (or removes it from) the ring files removed when the JVM exits. */
    static void removeAtExit(Path file, boolean add) {
        if (add) {
            OWNED.add(file);
        } else {
            OWNED.remove(file);
        }
    }

    /** Checks against the user {@code uid} (-1: owners are not checked, where the uid is unknown). */
    ShmRingFiles(int uid) {
        this.uid = uid;
    }

    private static int processUid() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** Creates {@code file} (O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600); FileAlreadyExistsException if anything is there. */
    FileChannel create(Path file) throws IOException {
        FileChannel ch = FileChannel.open(file, Set.<OpenOption>of(StandardOpenOption.CREATE_NEW,
                StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS),
                PosixFilePermissions.asFileAttribute(MODE_0600));
        try {
            Files.setPosixFilePermissions(file, MODE_0600); // what the umask took away; never more
            check(file, attributes(file));
            return ch;
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /**
     * Opens an existing ring file read-write after the checks. NoSuchFileException if there is none;
     * {@link Untrusted} if it is a link, not a regular file, another user's, not mode 0600, or replaced
     * while it was opened.
     */
    FileChannel open(Path file) throws IOException {
        Map<String, Object> before = attributes(file);
        check(file, before);
        FileChannel ch;
        try {
            ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
        } catch (FileSystemException e) {
            if (e instanceof NoSuchFileException) {
                throw e;
            }
            throw new Untrusted(file + ": cannot open it without following links (" + e.getReason()
                    + "; ELOOP if it became a link)");
        }
        try {
            Map<String, Object> after = attributes(file);
            check(file, after);
            if (!before.get("ino").equals(after.get("ino")) || !before.get("dev").equals(after.get("dev"))) {
                throw new Untrusted(file + " was replaced while it was opened: not used");
            }
            return ch;
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /**
     * A file found where this process is about to create its own ring: returns normally if it is this
     * user's regular 0600 file (a stale ring of a process of ours may be removed); else {@link Untrusted}.
     */
    void checkExisting(Path file) throws IOException {
        check(file, attributes(file));
    }

    private static Map<String, Object> attributes(Path file) throws IOException {
        return Files.readAttributes(file, "unix:mode,uid,ino,dev", NOFOLLOW);
    }

    private void check(Path file, Map<String, Object> a) throws Untrusted {
        int mode = (Integer) a.get("mode");
        int type = mode & 0170000;
        String remedy = "; remove it (or ask its owner to), or set -Drdma4j.shm.dir to a directory of your own (mode 0700)";
        if (type == 0120000) {
            throw new Untrusted(file + " is a symbolic link (ELOOP): a ring file is never followed" + remedy);
        }
        if (type != 0100000) {
            throw new Untrusted(file + " is not a regular file (EINVAL)" + remedy);
        }
        int owner = (Integer) a.get("uid");
        if (uid >= 0 && owner != uid) {
            throw new Untrusted(file + " belongs to uid " + owner + ", not to this process's uid " + uid
                    + " (EACCES): another user's file is never trusted" + remedy);
        }
        if ((mode & 07777) != 0600) {
            throw new Untrusted(file + " has mode " + Integer.toOctalString(mode & 07777)
                    + ", not 0600 (EACCES): others could read or write it" + remedy);
        }
    }

    /** The message of {@code e} for a warning, with the errno a plain file-system error stands for. */
    static String describe(Path file, IOException e) {
        if (e instanceof Untrusted) {
            return e.getMessage();
        }
        String errno = e instanceof FileAlreadyExistsException ? "EEXIST"
                : e instanceof NoSuchFileException ? "ENOENT"
                : e instanceof java.nio.file.AccessDeniedException ? "EACCES" : null;
        String what = e instanceof FileSystemException f && f.getReason() != null ? f.getReason() : e.getMessage();
        return file + ": " + what + (errno == null ? "" : " (" + errno + ")");
    }
}
