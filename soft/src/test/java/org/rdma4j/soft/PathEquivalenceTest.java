// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.rdma4j.soft.link.DirectLink;
import org.rdma4j.soft.link.Link;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.verbs.*;

/**
 * The data-path cases of WRITE and SEND, each run over the two paths a packet can take on one
 * in-process fabric: handed to the peer QP without a packet (one-packet WRITEs and SENDs) or as a
 * burst (multi-packet WRITEs: 3000 bytes are three packets at MTU 1024), and as packets through a
 * link that is not a {@link DirectLink} (so the requester sends every packet and the responder
 * checks each). The outcome must be the same: the
 * requester's and the responder's work completions, the target memory, the QPs' states. A check
 * added to one path and not the other makes a case differ here.
 */
class PathEquivalenceTest {

    /** The outcome of one case: what a program would see. */
    private record Outcome(List<String> requester, List<String> responder, byte[] target, QpState a, QpState b) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Outcome x && requester.equals(x.requester) && responder.equals(x.responder)
                    && java.util.Arrays.equals(target, x.target) && a == x.a && b == x.b;
        }

        @Override
        public int hashCode() {
            return requester.hashCode();
        }

        @Override
        public String toString() {
            return "requester " + requester + ", responder " + responder + ", QPs " + a + "/" + b;
        }
    }

    enum Case {
        WRITE_8 {
            void post(Pair p) {
                p.qa.postSend(write(p, 0, 8, 0, p.mb.rkey()));
            }
        },
        WRITE_ZERO_BYTES {
            void post(Pair p) {
                p.qa.postSend(new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED)
                        .write(p.mb.address(), p.mb.rkey()));
            }
        },
        WRITE_3_PACKETS {
            void post(Pair p) {
                p.qa.postSend(write(p, 0, 3000, 0, p.mb.rkey()));
            }
        },
        WRITE_BAD_RKEY {
            void post(Pair p) {
                p.qa.postSend(write(p, 0, 8, 0, p.mb.rkey() ^ 0x100));
            }
        },
        WRITE_3_PACKETS_BAD_RKEY {
            void post(Pair p) {
                p.qa.postSend(write(p, 0, 3000, 0, p.mb.rkey() ^ 0x100));
            }
        },
        WRITE_PAST_THE_REGION {
            void post(Pair p) {
                p.qa.postSend(write(p, 0, 16, 4096 - 8, p.mb.rkey()));
            }
        },
        WRITE_3_PACKETS_PAST_THE_REGION {
            void post(Pair p) {
                p.qa.postSend(write(p, 0, 3000, 4096 - 2000, p.mb.rkey()));
            }
        },
        WRITE_WITHOUT_REMOTE_WRITE_ON_THE_QP {
            void post(Pair p) {
                p.qb.modify(new QpAttr().accessFlags(Access.REMOTE_READ), QpAttrMask.ACCESS_FLAGS);
                p.qa.postSend(write(p, 0, 8, 0, p.mb.rkey()));
            }
        },
        WRITE_3_PACKETS_WITHOUT_REMOTE_WRITE_ON_THE_QP {
            void post(Pair p) {
                p.qb.modify(new QpAttr().accessFlags(Access.REMOTE_READ), QpAttrMask.ACCESS_FLAGS);
                p.qa.postSend(write(p, 0, 3000, 0, p.mb.rkey()));
            }
        },
        WRITE_WITH_IMMEDIATE {
            void post(Pair p) {
                p.qb.postRecv(new RecvWorkRequest().wrId(7));
                p.qa.postSend(new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED).sge(p.ma, 0, 8)
                        .writeWithImm(p.mb.address(), p.mb.rkey(), 0x1234));
            }
        },
        SEND_8 {
            void post(Pair p) {
                p.qb.postRecv(new RecvWorkRequest().wrId(7).sge(p.mb, 0, 64));
                p.qa.postSend(new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED).sge(p.ma, 0, 8).send());
            }
        },
        SEND_LONGER_THAN_THE_RECEIVE {
            void post(Pair p) {
                p.qb.postRecv(new RecvWorkRequest().wrId(7).sge(p.mb, 0, 4));
                p.qa.postSend(new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED).sge(p.ma, 0, 8).send());
            }
        },
        SEND_TO_A_BAD_LKEY {
            void post(Pair p) {
                p.qb.postRecv(new RecvWorkRequest().wrId(7).sge(p.mb.address(), 64, p.mb.lkey() ^ 0x100));
                p.qa.postSend(new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED).sge(p.ma, 0, 8).send());
            }
        },
        SEND_WITHOUT_A_RECEIVE {
            void post(Pair p) {
                p.qa.postSend(new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED).sge(p.ma, 0, 8).send());
            }
        };

        abstract void post(Pair p);

        /** The requester's RNR retry count: 0 where the case ends in RNR_RETRY_EXC_ERR at once. */
        int rnrRetry() {
            return this == SEND_WITHOUT_A_RECEIVE ? 0 : 7;
        }

        /** Requester WCs expected: one, for wr_id 1. Responder WCs: as many as the case posted receives. */
        int responderCompletions() {
            return switch (this) {
                case WRITE_WITH_IMMEDIATE, SEND_8, SEND_LONGER_THAN_THE_RECEIVE, SEND_TO_A_BAD_LKEY -> 1;
                default -> 0;
            };
        }
    }

    private static SendWorkRequest write(Pair p, long from, int len, long at, int rkey) {
        return new SendWorkRequest().wrId(1).flags(SendFlag.SIGNALED).sge(p.ma, from, len)
                .write(p.mb.address() + at, rkey);
    }

    private record Pair(QueuePair qa, QueuePair qb, CompletionQueue ca, CompletionQueue cb, MemoryRegion ma,
                        MemoryRegion mb) {
    }

    @ParameterizedTest
    @EnumSource(Case.class)
    void theDirectPathAndThePacketPathEndAlike(Case c) {
        AtomicLong linkPackets = new AtomicLong();
        Outcome direct = run("eq-d-" + c.ordinal(), c, null);
        Outcome packets = run("eq-p-" + c.ordinal(), c, link -> new CountingLink(link, linkPackets));
        assertTrue(linkPackets.get() > 0, "the packet path sent its packets through the link");
        assertEquals(direct, packets, "direct: " + direct + "; packets: " + packets);
        assertArrayEquals(direct.target(), packets.target());
    }

    private static Outcome run(String name, Case c, UnaryOperator<Link> wrapper) {
        Outcome[] out = new Outcome[1];
        QpCap cap = new QpCap(16, 16, 1, 1, 0);
        InProcessPair.with(name, cap, cap, wrapper, c.rnrRetry(), p -> {
            for (int i = 0; i < 4096; i++) {
                p.src().set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 1));
            }
            c.post(new Pair(p.qa(), p.qb(), p.ca(), p.cb(), p.ma(), p.mb()));
            List<String> req = List.of(describe(ReceivePathFuzzTest.Connect.poll(p.ca())));
            List<String> resp = new ArrayList<>();
            for (int i = 0; i < c.responderCompletions(); i++) {
                resp.add(describe(ReceivePathFuzzTest.Connect.poll(p.cb())));
            }
            out[0] = new Outcome(req, resp, p.dst().toArray(ValueLayout.JAVA_BYTE), p.qa().state(), p.qb().state());
        });
        return out[0];
    }

    private static String describe(WorkCompletion w) {
        return w.wrId() + " " + w.status() + (w.isSuccess() ? " " + w.opcode() + " " + w.byteLen()
                + ((w.wcFlags() & WcFlag.WITH_IMM) != 0 ? " imm " + w.immData() : "") : "");
    }

    /** A link around the fabric's that is not a {@link DirectLink}: every packet goes through it, counted. */
    private static final class CountingLink implements Link {
        private final Link inner;
        private final AtomicLong sent;

        CountingLink(Link inner, AtomicLong sent) {
            this.inner = inner;
            this.sent = sent;
        }

        @Override
        public void send(Packet packet) {
            sent.incrementAndGet();
            inner.send(packet);
        }

        @Override
        public void close() {
            inner.close();
        }
    }
}
