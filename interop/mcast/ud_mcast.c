/*
 * ud_mcast: UD multicast over libibverbs, the C counterpart of `rdma4j mcast` (same options, same
 * payload pattern, same output lines), for the interop VM.
 *
 *   ud_mcast recv -d rxe0 -g 1 -m 239.1.2.3 [-n N] [-s SIZE] [-q QPS] [--reply] [--join-ip] [-t SEC]
 *   ud_mcast send -d rxe0 -g 1 -m 239.1.2.3 [-n N] [-s SIZE] [--reply [-r RECEIVERS]] [-t SEC]
 *
 * recv attaches QPS UD QPs to the group (ibv_attach_mcast) and waits for N datagrams on each; every
 * datagram's sender (GID from the GRH area, QPN from the WC), destination and payload are checked and
 * printed. --reply answers each one by unicast from the receiving QP. --join-ip also joins the IP
 * group on the GID's net device with an ordinary UDP socket (kernels whose rxe only programs the MAC
 * filter, see interop/README.md). send posts N sends to QPN 0xFFFFFF with an AH to the group; with
 * --reply it waits until RECEIVERS QPs have answered all of them.
 *
 * Payload of datagram SEQ (SIZE >= 4 bytes): SEQ as a big-endian 32-bit number, then byte i holds
 * (SEQ + i) & 0xff. A reply carries the datagram it answers.
 *
 * Exit status: 0 when everything arrived intact, 1 on a failure or timeout, 2 on a bad option.
 * Build: gcc -O2 -Wall -o ud_mcast ud_mcast.c -libverbs
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define GRH 40
#define MCAST_QPN 0xFFFFFF
#define MAX_QPS 16
#define MAX_PEERS 64
#define MAX_ITERS 100000

static const char *role, *dev_name, *group_text;
static int ib_port = 1, gid_idx = 1, iters = 10, size = 64, nqps = 1, reply, join_ip, receivers = 1;
static int timeout_s = 30;
static uint32_t qkey = 0x11111111;

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static struct ibv_qp *qps[MAX_QPS];
static unsigned char *buf;
static int depth, slot_size;
/* Receive completions that arrived while waiting for a send completion, handled afterwards. */
static struct ibv_wc *held;
static int nheld, held_cap;
static union ibv_gid group, sgid;

/* recv: a sender as seen by one receiving QP (q); send: a replier (q = 0). */
struct peer {
	union ibv_gid gid;
	uint32_t qpn;
	int q;
	struct ibv_ah *ah;
	unsigned char *seen;
	int count;
};
static struct peer peers[MAX_PEERS];
static int npeers;

static void usage(void)
{
	fprintf(stderr,
		"usage: ud_mcast recv|send -m GROUP [-d DEV] [-i PORT] [-g GIDX] [-Q QKEY] [-n N] [-s SIZE]\n"
		"                [-q QPS] [--reply] [-r RECEIVERS] [--join-ip] [-t SECONDS]\n");
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int parse_group(const char *text, union ibv_gid *g)
{
	struct in_addr a4;
	memset(g, 0, sizeof(*g));
	if (inet_pton(AF_INET, text, &a4) == 1) {
		g->raw[10] = g->raw[11] = 0xff;
		memcpy(&g->raw[12], &a4, 4);
	} else if (inet_pton(AF_INET6, text, g->raw) != 1) {
		return -1;
	}
	return 0;
}

static int is_v4_mapped(const union ibv_gid *g)
{
	static const unsigned char prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	return memcmp(g->raw, prefix, 12) == 0;
}

static int is_multicast(const union ibv_gid *g)
{
	return g->raw[0] == 0xff || (is_v4_mapped(g) && (g->raw[12] & 0xf0) == 0xe0);
}

static const char *gid_str(const union ibv_gid *g, char *out)
{
	inet_ntop(AF_INET6, g->raw, out, INET6_ADDRSTRLEN);
	return out;
}

static void fill(unsigned char *p, uint32_t seq)
{
	p[0] = seq >> 24;
	p[1] = seq >> 16;
	p[2] = seq >> 8;
	p[3] = seq;
	for (int i = 4; i < size; i++)
		p[i] = (seq + i) & 0xff;
}

/* The sequence number, or -1 if the pattern is wrong. */
static long check(const unsigned char *p)
{
	uint32_t seq = (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
	for (int i = 4; i < size; i++)
		if (p[i] != ((seq + i) & 0xff))
			return -1;
	return seq < (uint32_t)iters ? (long)seq : -1;
}

/*
 * Source and destination GID of a received datagram from its 40-byte GRH area, the layout decided
 * as rdma-core's ibv_init_ah_from_wc decides it: IPv6 by the version nibble, unless the last 20 bytes
 * are an IPv4 header with a valid checksum.
 */
static int grh_addresses(const unsigned char *grh, union ibv_gid *src, union ibv_gid *dst)
{
	const unsigned char *ip4 = grh + 20;
	int v4 = 0;
	if ((ip4[0] >> 4) == 4 && (ip4[0] & 0xf) == 5) {
		uint32_t sum = 0;
		for (int i = 0; i < 20; i += 2)
			sum += ip4[i] << 8 | ip4[i + 1];
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		v4 = sum == 0xffff || (grh[0] >> 4) != 6;
	}
	memset(src, 0, sizeof(*src));
	memset(dst, 0, sizeof(*dst));
	if (v4) {
		src->raw[10] = src->raw[11] = dst->raw[10] = dst->raw[11] = 0xff;
		memcpy(&src->raw[12], ip4 + 12, 4);
		memcpy(&dst->raw[12], ip4 + 16, 4);
		return 0;
	}
	if ((grh[0] >> 4) != 6)
		return -1;
	memcpy(src->raw, grh + 8, 16);
	memcpy(dst->raw, grh + 24, 16);
	return 0;
}

static struct peer *peer_of(const union ibv_gid *gid, uint32_t qpn, int q)
{
	for (int i = 0; i < npeers; i++)
		if (peers[i].qpn == qpn && peers[i].q == q && !memcmp(peers[i].gid.raw, gid->raw, 16))
			return &peers[i];
	if (npeers == MAX_PEERS)
		return NULL;
	struct peer *p = &peers[npeers++];
	p->gid = *gid;
	p->qpn = qpn;
	p->q = q;
	p->seen = calloc(iters, 1);
	return p;
}

static struct ibv_ah *make_ah(const union ibv_gid *dgid, int hop_limit)
{
	struct ibv_ah_attr attr = {
		.is_global = 1,
		.grh = {.dgid = *dgid, .sgid_index = gid_idx, .hop_limit = hop_limit},
		.port_num = ib_port,
	};
	struct ibv_ah *ah = ibv_create_ah(pd, &attr);
	if (!ah)
		fprintf(stderr, "ud_mcast: ibv_create_ah: %s\n", strerror(errno));
	return ah;
}

static int post_recv(int q, int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(buf + (size_t)(q * depth + slot) * slot_size),
		.length = GRH + size,
		.lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = {.wr_id = (uint64_t)q << 32 | slot, .sg_list = &sge, .num_sge = 1}, *bad;
	int rc = ibv_post_recv(qps[q], &wr, &bad);
	if (rc)
		fprintf(stderr, "ud_mcast: ibv_post_recv: %s\n", strerror(rc));
	return rc;
}

/* Sends SIZE bytes from the send area (after all receive slots) and waits for the completion. */
static int send_one(struct ibv_qp *qp, struct ibv_ah *ah, uint32_t dqpn, const unsigned char *payload)
{
	unsigned char *area = buf + (size_t)nqps * depth * slot_size;
	memcpy(area, payload, size);
	struct ibv_sge sge = {.addr = (uintptr_t)area, .length = size, .lkey = mr->lkey};
	struct ibv_send_wr wr = {
		.wr_id = UINT64_MAX, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = {.ah = ah, .remote_qpn = dqpn, .remote_qkey = qkey},
	}, *bad;
	int rc = ibv_post_send(qp, &wr, &bad);
	if (rc) {
		fprintf(stderr, "ud_mcast: ibv_post_send: %s\n", strerror(rc));
		return -1;
	}
	return 0;
}

static int setup(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	if (!list || !list[0]) {
		fprintf(stderr, "ud_mcast: no RDMA devices\n");
		return -1;
	}
	struct ibv_device *dev = list[0];
	for (int i = 0; dev_name && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev_name))
			dev = list[i];
	if (dev_name && strcmp(ibv_get_device_name(dev), dev_name)) {
		fprintf(stderr, "ud_mcast: no device %s\n", dev_name);
		return -1;
	}
	ctx = ibv_open_device(dev);
	ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "ud_mcast: ibv_open_device: %s\n", strerror(errno));
		return -1;
	}
	struct ibv_port_attr pa;
	if (ibv_query_port(ctx, ib_port, &pa)) {
		fprintf(stderr, "ud_mcast: ibv_query_port: %s\n", strerror(errno));
		return -1;
	}
	if (size > (128 << pa.active_mtu)) {
		fprintf(stderr, "ud_mcast: -s %d is larger than the port MTU (%d)\n", size, 128 << pa.active_mtu);
		return -1;
	}
	if (ibv_query_gid(ctx, ib_port, gid_idx, &sgid)) {
		fprintf(stderr, "ud_mcast: ibv_query_gid %d: %s\n", gid_idx, strerror(errno));
		return -1;
	}
	if (is_v4_mapped(&sgid) != is_v4_mapped(&group)) {
		fprintf(stderr, "ud_mcast: group and GID index %d are not of the same IP version\n", gid_idx);
		return -1;
	}
	/* recv: a receive per datagram, up to 256 per QP, reposted as they are handled; send: one per
	 * expected answer, up to 1024 (answers can arrive while it is still sending) */
	if (!strcmp(role, "recv"))
		depth = iters < 256 ? iters : 256;
	else
		depth = !reply ? 1 : iters * receivers < 1024 ? iters * receivers : 1024;
	slot_size = (GRH + size + 63) & ~63;
	size_t bytes = (size_t)nqps * depth * slot_size + slot_size;
	held_cap = nqps * depth + 16;
	held = calloc(held_cap, sizeof(*held));
	buf = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, nqps * depth + 16, NULL, NULL, 0) : NULL;
	mr = cq && buf ? ibv_reg_mr(pd, buf, bytes, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!mr) {
		fprintf(stderr, "ud_mcast: PD/CQ/MR: %s\n", strerror(errno));
		return -1;
	}
	for (int q = 0; q < nqps; q++) {
		struct ibv_qp_init_attr init = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
			.cap = {.max_send_wr = 16, .max_recv_wr = depth, .max_send_sge = 1, .max_recv_sge = 1},
		};
		qps[q] = ibv_create_qp(pd, &init);
		if (!qps[q]) {
			fprintf(stderr, "ud_mcast: ibv_create_qp: %s\n", strerror(errno));
			return -1;
		}
		struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = ib_port, .qkey = qkey};
		if (ibv_modify_qp(qps[q], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)) {
			fprintf(stderr, "ud_mcast: modify to INIT: %s\n", strerror(errno));
			return -1;
		}
		a.qp_state = IBV_QPS_RTR;
		if (ibv_modify_qp(qps[q], &a, IBV_QP_STATE)) {
			fprintf(stderr, "ud_mcast: modify to RTR: %s\n", strerror(errno));
			return -1;
		}
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 0;
		if (ibv_modify_qp(qps[q], &a, IBV_QP_STATE | IBV_QP_SQ_PSN)) {
			fprintf(stderr, "ud_mcast: modify to RTS: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Joins the IP group on the GID's net device with a plain UDP socket (kept open until exit). */
static int join_ip_group(void)
{
	char path[128], ndev[IF_NAMESIZE + 2] = "";
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/gid_attrs/ndevs/%d",
		 ibv_get_device_name(ctx->device), ib_port, gid_idx);
	FILE *f = fopen(path, "r");
	if (!f || !fgets(ndev, sizeof(ndev), f)) {
		fprintf(stderr, "ud_mcast: cannot read %s\n", path);
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	ndev[strcspn(ndev, "\n")] = 0;
	unsigned ifindex = if_nametoindex(ndev);
	int v4 = is_v4_mapped(&group);
	int fd = socket(v4 ? AF_INET : AF_INET6, SOCK_DGRAM, 0);
	int rc;
	if (v4) {
		struct ip_mreqn m = {.imr_ifindex = ifindex};
		memcpy(&m.imr_multiaddr, &group.raw[12], 4);
		rc = setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m));
	} else {
		struct ipv6_mreq m = {.ipv6mr_interface = ifindex};
		memcpy(&m.ipv6mr_multiaddr, group.raw, 16);
		rc = setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &m, sizeof(m));
	}
	if (fd < 0 || rc) {
		fprintf(stderr, "ud_mcast: joining the IP group on %s: %s\n", ndev, strerror(errno));
		return -1;
	}
	printf("ud_mcast: joined the IP group on %s (ifindex %u) with a UDP socket\n", ndev, ifindex);
	return 0;
}

/* One completion (or none before the deadline): returns 1, 0 on timeout, -1 on a failed one. */
static int poll_one(struct ibv_wc *wc, double deadline)
{
	for (;;) {
		int n = ibv_poll_cq(cq, 1, wc);
		if (n < 0) {
			fprintf(stderr, "ud_mcast: ibv_poll_cq failed\n");
			return -1;
		}
		if (n == 1) {
			if (wc->status != IBV_WC_SUCCESS) {
				fprintf(stderr, "ud_mcast: completion failed: %s (wr_id 0x%llx)\n",
					ibv_wc_status_str(wc->status), (unsigned long long)wc->wr_id);
				return -1;
			}
			return 1;
		}
		if (now() > deadline)
			return 0;
		usleep(50);
	}
}

/* The next completion: a held one first. */
static int next_wc(struct ibv_wc *wc, double deadline)
{
	if (nheld > 0) {
		*wc = held[0];
		memmove(held, held + 1, --nheld * sizeof(*held));
		return 1;
	}
	return poll_one(wc, deadline);
}

static int recv_reply(struct ibv_wc *wc);

/* Waits for the completion of the send just posted; datagrams that come first are held (recv),
 * answers are handled at once (send). */
static int wait_send(double deadline)
{
	struct ibv_wc wc;
	for (;;) {
		int rc = poll_one(&wc, deadline);
		if (rc <= 0) {
			if (rc == 0)
				fprintf(stderr, "ud_mcast: no send completion before the timeout\n");
			return -1;
		}
		if (wc.wr_id == UINT64_MAX)
			return 0;
		if (!strcmp(role, "send")) {
			/* an answer: counted and reposted at once */
			if (recv_reply(&wc))
				return -1;
			continue;
		}
		if (nheld == held_cap) {
			fprintf(stderr, "ud_mcast: too many completions\n");
			return -1;
		}
		held[nheld++] = wc;
	}
}

static int bad, received;
static int *per_qp;

static int recv_datagram(struct ibv_wc *wc)
{
	int q = wc->wr_id >> 32, slot = wc->wr_id & 0xffffffff;
	unsigned char *p = buf + (size_t)(q * depth + slot) * slot_size;
	union ibv_gid src, dst;
	char s1[INET6_ADDRSTRLEN], s2[INET6_ADDRSTRLEN];
	long seq = -1;
	int ok = (wc->wc_flags & IBV_WC_GRH) && wc->byte_len == (uint32_t)(GRH + size) &&
		 grh_addresses(p, &src, &dst) == 0 && !memcmp(dst.raw, group.raw, 16) && (seq = check(p + GRH)) >= 0;
	if (!(wc->wc_flags & IBV_WC_GRH))
		memset(&src, 0, sizeof(src)), memset(&dst, 0, sizeof(dst));
	struct peer *from = ok ? peer_of(&src, wc->src_qp, q) : NULL;
	if (ok && from && !from->seen[seq]) {
		from->seen[seq] = 1;
		per_qp[q]++;
		received++;
	} else {
		ok = 0;
	}
	printf("recv qp 0x%06x seq %ld from %s qpn 0x%06x to %s len %u %s\n", qps[q]->qp_num, seq,
	       gid_str(&src, s1), wc->src_qp, gid_str(&dst, s2), wc->byte_len, ok ? "ok" : "BAD");
	if (!ok) {
		bad++;
	} else if (reply) {
		if (!from->ah && !(from->ah = make_ah(&src, 64)))
			return -1;
		if (send_one(qps[q], from->ah, wc->src_qp, p + GRH) || wait_send(now() + 5))
			return -1;
	}
	return post_recv(q, slot);
}

static int recv_reply(struct ibv_wc *wc)
{
	int slot = wc->wr_id & 0xffffffff;
	unsigned char *p = buf + (size_t)slot * slot_size;
	union ibv_gid src, dst;
	char s1[INET6_ADDRSTRLEN];
	long seq = -1;
	int ok = (wc->wc_flags & IBV_WC_GRH) && wc->byte_len == (uint32_t)(GRH + size) &&
		 grh_addresses(p, &src, &dst) == 0 && !memcmp(dst.raw, sgid.raw, 16) && (seq = check(p + GRH)) >= 0;
	struct peer *from = ok ? peer_of(&src, wc->src_qp, 0) : NULL;
	if (ok && from && !from->seen[seq]) {
		from->seen[seq] = 1;
		from->count++;
		received++;
	} else {
		ok = 0;
		bad++;
	}
	printf("reply seq %ld from %s qpn 0x%06x len %u %s\n", seq, gid_str(&src, s1), wc->src_qp, wc->byte_len,
	       ok ? "ok" : "BAD");
	return post_recv(0, slot);
}

static int complete_repliers(void)
{
	int done = 0;
	for (int i = 0; i < npeers; i++)
		done += peers[i].count == iters;
	return done;
}

static int run_recv(void)
{
	char s[INET6_ADDRSTRLEN];
	per_qp = calloc(nqps, sizeof(int));
	for (int q = 0; q < nqps; q++) {
		for (int i = 0; i < depth; i++)
			if (post_recv(q, i))
				return 1;
		if (ibv_attach_mcast(qps[q], &group, 0)) {
			fprintf(stderr, "ud_mcast: ibv_attach_mcast: %s\n", strerror(errno));
			return 1;
		}
	}
	if (join_ip && join_ip_group())
		return 1;
	for (int q = 0; q < nqps; q++)
		printf("ud_mcast: QP 0x%06x attached to %s\n", qps[q]->qp_num, gid_str(&group, s));
	printf("ud_mcast: waiting for %d datagrams on each of %d QP(s), GID %s\n", iters, nqps, gid_str(&sgid, s));
	fflush(stdout);
	double deadline = now() + timeout_s;
	int rc = 0;
	while (received < iters * nqps) {
		struct ibv_wc wc;
		int r = next_wc(&wc, deadline);
		if (r <= 0 || wc.wr_id == UINT64_MAX || recv_datagram(&wc)) {
			if (r == 0)
				fprintf(stderr, "ud_mcast: timeout after %d s\n", timeout_s);
			rc = 1;
			break;
		}
		fflush(stdout);
	}
	for (int q = 0; q < nqps; q++) {
		if (per_qp[q] != iters) {
			fprintf(stderr, "ud_mcast: QP 0x%06x received %d of %d\n", qps[q]->qp_num, per_qp[q], iters);
			rc = 1;
		}
		ibv_detach_mcast(qps[q], &group, 0);
	}
	printf("mcast recv: qps=%d received=%d bad=%d replies=%d\n", nqps, received, bad, reply ? received : 0);
	return rc || bad ? 1 : 0;
}

static int run_send(void)
{
	char s[INET6_ADDRSTRLEN];
	unsigned char payload[65536];
	if (reply) {
		for (int i = 0; i < depth; i++)
			if (post_recv(0, i))
				return 1;
	}
	/* hop limit 1: the group stays on the local link */
	struct ibv_ah *ah = make_ah(&group, 1);
	if (!ah)
		return 1;
	printf("ud_mcast: sending %d datagrams of %d bytes to %s from QP 0x%06x, GID %s\n", iters, size,
	       gid_str(&group, s), qps[0]->qp_num, gid_str(&sgid, s));
	fflush(stdout);
	for (int i = 0; i < iters; i++) {
		fill(payload, i);
		if (send_one(qps[0], ah, MCAST_QPN, payload) || wait_send(now() + 5))
			return 1;
	}
	int rc = 0;
	if (reply) {
		double deadline = now() + timeout_s;
		while (complete_repliers() < receivers) {
			struct ibv_wc wc;
			int r = next_wc(&wc, deadline);
			if (r <= 0 || recv_reply(&wc)) {
				if (r == 0)
					fprintf(stderr, "ud_mcast: timeout after %d s\n", timeout_s);
				rc = 1;
				break;
			}
			fflush(stdout);
		}
		for (int i = 0; i < npeers; i++)
			printf("ud_mcast: %s QPN 0x%06x answered %d of %d\n", gid_str(&peers[i].gid, s), peers[i].qpn,
			       peers[i].count, iters);
	}
	printf("mcast send: sent=%d replies=%d repliers=%d bad=%d\n", iters, received, npeers, bad);
	return rc || bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{"ib-dev", 1, 0, 'd'}, {"ib-port", 1, 0, 'i'}, {"gid-idx", 1, 0, 'g'}, {"group", 1, 0, 'm'},
		{"qkey", 1, 0, 'Q'}, {"iters", 1, 0, 'n'}, {"size", 1, 0, 's'}, {"qps", 1, 0, 'q'},
		{"receivers", 1, 0, 'r'}, {"timeout", 1, 0, 't'}, {"reply", 0, 0, 'R'}, {"join-ip", 0, 0, 'J'},
		{0, 0, 0, 0}};
	if (argc < 2 || (strcmp(argv[1], "recv") && strcmp(argv[1], "send"))) {
		usage();
		return 2;
	}
	role = argv[1];
	optind = 2;
	int c;
	char *end;
	while ((c = getopt_long(argc, argv, "d:i:g:m:Q:n:s:q:r:t:", longs, NULL)) != -1) {
		long v = 0;
		if (optarg && c != 'd' && c != 'm') {
			errno = 0;
			v = strtol(optarg, &end, 0);
			if (errno || *end || end == optarg) {
				fprintf(stderr, "ud_mcast: -%c %s is not a number\n", c, optarg);
				return 2;
			}
		}
		switch (c) {
		case 'd': dev_name = optarg; break;
		case 'i': ib_port = v; break;
		case 'g': gid_idx = v; break;
		case 'm': group_text = optarg; break;
		case 'Q': qkey = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'n': iters = v; break;
		case 's': size = v; break;
		case 'q': nqps = v; break;
		case 'r': receivers = v; break;
		case 't': timeout_s = v; break;
		case 'R': reply = 1; break;
		case 'J': join_ip = 1; break;
		default: usage(); return 2;
		}
	}
	if (optind != argc || !group_text || parse_group(group_text, &group) || !is_multicast(&group) ||
	    iters < 1 || iters > MAX_ITERS || size < 4 || size > 65536 || nqps < 1 || nqps > MAX_QPS ||
	    receivers < 1 || receivers > MAX_PEERS || timeout_s < 1) {
		fprintf(stderr, "ud_mcast: bad options (-m must be a multicast group; -n 1..%d, -s 4..65536, "
				"-q 1..%d, -r 1..%d, -t >= 1)\n", MAX_ITERS, MAX_QPS, MAX_PEERS);
		usage();
		return 2;
	}
	if (!strcmp(role, "send"))
		nqps = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (setup())
		return 1;
	return !strcmp(role, "recv") ? run_recv() : run_send();
}
